/* global window, document, sessionStorage, crypto, TextEncoder, URL */
/**
 * The sandbox's /docs page signs its "Try it out" requests to /v1 (served only when SANDBOX=true).
 * The partner id and secret typed into the panel stay in this browser tab (sessionStorage); only
 * the signature leaves it, in the form chosen in the panel: the timestamped X-Polita-Signature =
 * id=<partner id>,t=<Unix seconds>,v1=<hex HMAC-SHA512 of "<t>.POST /v1/<endpoint>.<exact body>">
 * (decision 0045), or the contract's X-Hmac-Signature = <partner id>:<hex HMAC-SHA512 of the exact
 * body>, computed with WebCrypto, as a partner's code computes it. The page's requestInterceptor
 * (openapi.ts) calls window.politaSign.
 */
(function () {
  'use strict';
  var STORE = 'polita.sandbox.signing';
  var creds = { id: '', secret: '', form: 'timestamped' };
  try {
    creds = JSON.parse(sessionStorage.getItem(STORE) || 'null') || creds;
  } catch {
    // Nothing stored, or storage refused: the panel starts empty.
  }

  function hex(buffer) {
    return Array.from(new Uint8Array(buffer), function (b) {
      return b.toString(16).padStart(2, '0');
    }).join('');
  }

  window.politaSign = async function (request) {
    var path = new URL(request.url, window.location.href).pathname;
    if (!path.startsWith('/v1/')) return request;
    if (!creds.id || !creds.secret) {
      throw new Error('Type a partner id and secret in the "Sandbox request signing" panel first');
    }
    if (!crypto.subtle) {
      throw new Error(
        'This browser signs only on a secure page: open the docs on https:// or http://localhost',
      );
    }
    var body = typeof request.body === 'string' ? request.body : '';
    var encoder = new TextEncoder();
    var key = await crypto.subtle.importKey(
      'raw',
      encoder.encode(creds.secret),
      { name: 'HMAC', hash: 'SHA-512' },
      false,
      ['sign'],
    );
    for (var name of Object.keys(request.headers)) {
      var lower = name.toLowerCase();
      if (lower === 'x-hmac-signature' || lower === 'x-polita-signature') delete request.headers[name];
    }
    if (creds.form === 'spec') {
      var mac = await crypto.subtle.sign('HMAC', key, encoder.encode(body));
      request.headers['X-Hmac-Signature'] = creds.id + ':' + hex(mac);
      return request;
    }
    var t = String(Math.floor(Date.now() / 1000));
    var signed = await crypto.subtle.sign('HMAC', key, encoder.encode(t + '.POST ' + path + '.' + body));
    request.headers['X-Polita-Signature'] = 'id=' + creds.id + ',t=' + t + ',v1=' + hex(signed);
    return request;
  };

  function field(label, type, value) {
    var wrap = document.createElement('label');
    wrap.style.marginRight = '1em';
    wrap.textContent = label + ' ';
    var input = document.createElement('input');
    input.type = type;
    input.value = value;
    input.autocomplete = 'off';
    wrap.appendChild(input);
    return { wrap: wrap, input: input };
  }

  function panel() {
    var box = document.createElement('section');
    box.id = 'polita-signing';
    box.style.cssText = 'font-family:sans-serif;max-width:1420px;margin:1em auto;padding:0 20px';
    var title = document.createElement('h3');
    title.textContent = 'Sandbox request signing';
    var note = document.createElement('p');
    note.textContent =
      'Try it out signs each /v1 request in this page with the partner id and secret typed here ' +
      '(the demo partner’s are printed when the sandbox starts). They stay in this browser tab; ' +
      'only the signature is sent.';
    var id = field('Partner id', 'text', creds.id);
    var secret = field('Partner secret', 'password', creds.secret);
    var formWrap = document.createElement('label');
    formWrap.style.marginRight = '1em';
    formWrap.textContent = 'Signature ';
    var form = document.createElement('select');
    [
      ['timestamped', 'timestamped (X-Polita-Signature)'],
      ['spec', 'the original contract’s (X-Hmac-Signature)'],
    ].forEach(function (o) {
      var option = document.createElement('option');
      option.value = o[0];
      option.textContent = o[1];
      option.selected = (creds.form || 'timestamped') === o[0];
      form.appendChild(option);
    });
    formWrap.appendChild(form);
    var status = document.createElement('span');
    var save = document.createElement('button');
    save.type = 'button';
    save.textContent = 'Sign with these';
    save.onclick = function () {
      creds = { id: id.input.value.trim(), secret: secret.input.value, form: form.value };
      sessionStorage.setItem(STORE, JSON.stringify(creds));
      status.textContent = creds.id && creds.secret ? ' Signing as ' + creds.id : ' Not signing';
    };
    var forget = document.createElement('button');
    forget.type = 'button';
    forget.textContent = 'Forget';
    forget.onclick = function () {
      creds = { id: '', secret: '', form: 'timestamped' };
      sessionStorage.removeItem(STORE);
      id.input.value = '';
      secret.input.value = '';
      status.textContent = ' Not signing';
    };
    status.textContent = creds.id && creds.secret ? ' Signing as ' + creds.id : ' Not signing';
    box.append(title, note, id.wrap, secret.wrap, formWrap, save, forget, status);
    var ui = document.getElementById('swagger-ui');
    ui.parentNode.insertBefore(box, ui);
  }

  if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', panel);
  else panel();
})();
