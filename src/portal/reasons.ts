import type { T } from './i18n.ts';

/**
 * Refusals in the clerk's language (decision 0097). The use cases refuse in the partner API's
 * English words, which partners read on the wire and which stay as they are; the portal shows each
 * refusal it knows by its catalogue message (`reason.*`), with the values the English one named
 * (dates day first; a role, an area or a status in words). A refusal not listed here is shown
 * after a sentence of the catalogue saying so (`reason.other`).
 */
const REASONS: readonly (readonly [RegExp, string])[] = [
  [/^[\w.[\]]+ has an invalid check digit$/, 'reason.checkDigit'],
  [/^Vehicle not found$/, 'reason.vehicleNotFound'],
  [/^[\w.]+ must be between (?<from>\d{4}-\d\d-\d\d) and (?<to>\d{4}-\d\d-\d\d)$/, 'reason.dateBetween'],
  [/^idnx is not the registered owner of the vehicle$/, 'reason.notOwner'],
  [/^end_date is required for a single trip/, 'reason.endDateRequired'],
  [/^end_date must not be before start_date$/, 'reason.endBeforeStart'],
  [
    /^(Exactly one of vehicle or foreign_vehicle is required|Provide exactly one of vehicle or foreign_vehicle|Send either vehicle or foreign_vehicle, not both)$/,
    'reason.oneVehicle',
  ],
  [/^customer\.name is required: it is the vignette holder$/, 'reason.holderName'],
  [/^emission_class requires emission_proof_declared$/, 'reason.emissionProof'],
  [/^Invalid emission_class$/, 'reason.emissionClass'],
  [/^persons\[\d+\]: birthday \S+ is after start_date$/, 'reason.birthdayAfterStart'],
  [/^persons\[\d+\]: persons older than (?<oldest>\d+) cannot be insured$/, 'reason.tooOld'],
  [/^A single trip lasts at most (?<days>\d+) days$/, 'reason.tripTooLong'],
  [/^covered_territories: \S+ is the country of residence and cannot be covered$/, 'reason.residenceCovered'],
  [/^foreign_vehicle\.registration_country must not be MD/, 'reason.foreignNotMd'],
  [/^contractor\.idnx of a company must be an IDNO$/, 'reason.companyIdno'],
  [/^baggage_pcs must be between 1 and (?<max>\d+)$/, 'reason.baggagePieces'],
  [/^(RCA|Green card) is not sold for vehicle category (?<category>\S+)$/, 'reason.categoryNotSold'],
  [/^Road tax is not collected for vehicle category (?<category>\S+)$/, 'reason.categoryNotSold'],
  [/^Period \S+ is not on sale$/, 'reason.periodNotOnSale'],
  [
    /^Emission class (?<asked>\S+) requires a vehicle manufactured in (?<year>\d+) or later$/,
    'reason.emissionYear',
  ],
  [/^covered_territories: unknown territory \S+$/, 'reason.unknownTerritory'],
  [/^[\w.]+ \S+ is not a known ISO2 or ISO3 country code$/, 'reason.unknownCountry'],
  [/^insured_days must not exceed the (?<days>\d+) days of the availability period$/, 'reason.insuredDays'],
  [/^email must be an address like/, 'reason.email'],
  [/^A portal user with the email (?<email>\S+) exists already$/, 'reason.userExists'],
  [/^You cannot disable yourself/, 'reason.disableYourself'],
  [/^User not found, or disabled( already)?$/, 'reason.userNotFound'],
  [/^Partner not found$/, 'reason.partnerNotFound'],
  [/^The webhook URL is longer than 2000 characters$/, 'reason.webhookLong'],
  [/^Order is not payable \(status (?<status>\w+)\)$/, 'reason.notPayable'],
  [/^Order not found$/, 'reason.orderNotFound'],
  [/^No wallet account linked to this partner$/, 'reason.noWallet'],
  [/^Balance spending is disabled$/, 'reason.spendingDisabled'],
  [/^Balance cannot be applied to this order$/, 'reason.notEligible'],
  [/^Insufficient balance$/, 'reason.insufficient'],
  [/^This form is incomplete: start again from Sell\.$/, 'sell.incomplete'],
  [/^This form was already used: start again from Sell\.$/, 'reason.formUsed'],
  [/^This form is still being processed/, 'reason.formProcessing'],
  [/^That email and password do not match an account/, 'reason.wrongCredentials'],
  [
    /^Too many failed sign-ins for this address: try again in (?<minutes>\d+) min\.$/,
    'reason.tooManyAddress',
  ],
  [
    /^Too many failed sign-ins for this email from this address: try again in (?<minutes>\d+) min\.$/,
    'reason.tooManyEmail',
  ],
  [/^Your partner account is disabled/, 'reason.partnerDisabled'],
  [/^Your user is disabled/, 'reason.userDisabled'],
  [/^Your session has ended/, 'reason.sessionEnded'],
  [/^This request came from another site/, 'reason.otherSite'],
  [/^This form did not carry the portal’s security token/, 'reason.csrf'],
  [/^There is no portal page at (?<path>\S+)\.$/, 'reason.noPage'],
  [/^Something went wrong; quote request id (?<id>\S+) to /, 'reason.unexpected'],
  [/^The form is larger than 64 KiB\.$/, 'reason.tooLarge'],
  [/^(?<area>\w+) is for the .+ roles; you are signed in as (?<role>\w+)\./, 'reason.area'],
  [/^Re-sending webhooks is for the owner and developer roles\.$/, 'reason.resendRoles'],
  [/^This invitation link does not work/, 'reason.invalidInvitation'],
  [
    /^The password must be at least (?<min>\d+) characters long \(this one has (?<length>\d+)\)\.$/,
    'reason.passwordShort',
  ],
  [/^The password must be at most (?<max>\d+) characters long\.$/, 'reason.passwordLong'],
  [/^This password is among the 10 000 most common ones/, 'reason.passwordCommon'],
  [/^The current password is not right\.$/, 'reason.currentPasswordWrong'],
  // Cancel policy and Correct on an order's page (decisions 0087, 0088).
  [/^A (?<product>\S+) policy cannot be cancelled$/, 'reason.cannotCancelProduct'],
  [
    /^A (?<product>\S+) policy cannot be cancelled from its first day \((?<date>\d{4}-\d\d-\d\d)\)$/,
    'reason.cancelFromFirstDay',
  ],
  [/^The (?<product>\S+) policy has ended \((?<date>\d{4}-\d\d-\d\d)\)$/, 'reason.policyEnded'],
  [/^Cancellation quote expired: preview again$/, 'reason.cancelStale'],
  [/^The insurer refused the cancellation: (?<message>.*)$/s, 'reason.insurerRefusedCancel'],
  [/^The order has already been corrected once$/, 'reason.correctedOnce'],
  [/^A (?<product>\S+) policy cannot be corrected$/, 'reason.cannotCorrectProduct'],
  [/^The policy is valid since (?<date>\d{4}-\d\d-\d\d): it can be corrected only/, 'reason.correctTooLate'],
  [/^The price would change: cancel the order and sell it again$/, 'reason.priceWouldChange'],
  [/^Nothing would change: the order already has these values$/, 'reason.nothingChanges'],
  [/^Correction quote expired: preview again$/, 'reason.correctStale'],
  [/^changes\.plate_number must be 2 to 15 letters/, 'reason.plateFormat'],
  [/^changes\.start_date must be a date/, 'reason.startDateFormat'],
  [/^Only a completed order can be (cancelled|corrected)$/, 'reason.onlyCompleted'],
  [/^Issuance in progress$/, 'reason.issuing'],
  [/^Order is (?<status>\w+): only a completed order can be/, 'reason.notCompleted'],
  [/^Cancelling and correcting policies is for the owner and cashier roles\.$/, 'reason.afterSaleRoles'],
  // Developers' renewal notice and recent events (decisions 0091, 0092).
  [/^renewal_notice_days must be a whole number of days/, 'reason.renewalDays'],
  [/^Event not found$/, 'reason.eventNotFound'],
  [/^No webhook URL$/, 'reason.noWebhookUrl'],
  // zxcvbn's hints are English: the catalogue says the same in general words (decision 0085).
  [/^This password would be guessed too easily\. (?<why>.*)$/s, 'reason.passwordWeak'],
  // Product rules and create-order (issue 48).
  [/^Unknown (company_name|insurance_company) /, 'reason.unknownInsurer'],
  [/^No tariff for insured amount (?<amount>\S+)$/, 'reason.noTariffAmount'],
  [/^amount (?<amount>\S+) is not offered for .+; offered: (?<offered>.*)$/, 'reason.amountNotOffered'],
  [/^availability must be one of (?<months>.+) months$/, 'reason.availability'],
  [/^availability and insured_days are required for multiple trips/, 'reason.multipleTrips'],
  [/^Period \S+ is not sold for vehicle category (?<category>\S+);/, 'reason.periodNotForCategory'],
  [/^No vignette:eu on sale for country /, 'reason.noVignetteCountry'],
  [/^The vehicle has no VIN or chassis number in the registry/, 'reason.noVin'],
  [/^No \S+ vignette is sold for a vehicle of category (?<category>\S+) /, 'reason.noVignetteClass'],
  [/^Unknown validity \S+ for country /, 'reason.unknownValidity'],
  [/^Roadside assistance covers only category A \(M1\) vehicles up to (?<kg>\d+) kg/, 'reason.roadside'],
  [/^No Vignette found\.$/, 'reason.noVignette'],
  [/^The RO vignette price on this order is no longer valid/, 'reason.tariffChanged'],
  [/^[\w.[\]]+ must be 13 digits$/, 'reason.thirteenDigits'],
  [/^[\w.[\]]+ must be an IDNP \(a person's number\)$/, 'reason.mustBeIdnp'],
  [/^[\w.[\]]+ must be an IDNP or an IDNO$/, 'reason.mustBeIdnx'],
  [/^foreign_vehicle\.\w+ is required for category (?<category>\S+)$/, 'reason.requiredForCategory'],
  [/^[\w.]+ must not be MD/, 'reason.foreignNotMd'],
  [/^(Unknown product|There is no product) (?<code>.*)$/s, 'reason.unknownProduct'],
  [/^products must hold 1 to (?<max>\d+) entries$/, 'reason.productsCount'],
  [/^Order (?<id>\S+): (?<message>.+)$/s, 'reason.ofOrder'],
  // What a vignette:ro offer says of a vignette already active (its `message`, in the contract's words).
  [
    /^Pentru vehicul categorie (?<category>\S+) nr\.inmatriculare (?<plate>\S+), exista rovinieta activa in perioada (?<from>\S+) - (?<to>\S+)$/,
    'reason.activeVignette',
  ],
  // Payments, policies and lists.
  [/^payment\.amount (?<amount>.+) does not match the order price (?<price>.+)$/, 'reason.paymentAmount'],
  [/^payment\.amount must be an amount in MDL/, 'reason.paymentAmountFormat'],
  [/^payment\.paid_at must be between/, 'reason.paidAt'],
  [/^payment\.currency must be MDL/, 'reason.paymentCurrency'],
  [/^(This order has no policy at that position|There is no such policy document\.)$/, 'reason.noPolicy'],
  [/^cursor is not valid$/, 'reason.cursor'],
  [/^The language must be ro, ru or en$/, 'reason.language'],
  [/^role must be one of/, 'reason.role'],
  // The webhook URL (src/app/webhook-url.ts) and deliveries (src/app/deliver-webhook.ts).
  [/^webhook_url must be an absolute URL$/, 'reason.webhookAbsolute'],
  [/^webhook_url must be http:\/\/ or https:\/\/$/, 'reason.webhookScheme'],
  [/^webhook_url must be https:\/\/$/, 'reason.webhookHttps'],
  [/^webhook_url must point at a public address; (?<host>\S+) is not/, 'reason.webhookPublic'],
  [
    /^webhook host (?<host>\S+) (is not|resolves to \S+, which is not) a public address$/,
    'reason.webhookPublic',
  ],
  [/^webhook host (?<host>\S+) resolves to no address$/, 'reason.webhookNoAddress'],
  [/^no webhook URL registered$/, 'reason.noWebhookUrl'],
  [
    /^Order is (?<status>\w+): only a completed, failed, refunded or expired order has an event/,
    'reason.nothingToResend',
  ],
  [/^Partner \S+ does not receive (?<status>\w+) events/, 'reason.notSubscribed'],
  [/^the partner has no active secret to sign with$/, 'reason.noSecret'],
  [/^expected 2xx, got (?<code>\d+)$/, 'reason.expected2xx'],
  [/^timed out after (?<seconds>\d+) s$/, 'reason.timedOut'],
  // Providers and what an order's failure says (src/providers, src/app/issue-order.ts).
  [/^The provider refused to issue the policy: (?<message>.*?)\.?$/s, 'reason.providerRefusedIssue'],
  [/^The policy could not be issued: the provider did not answer/, 'reason.providerSilent'],
  [/^the \S+ provider refused the vehicle/, 'reason.providerRefusedVehicle'],
  [/^the \S+ insurer does not cancel policies of this vehicle$/, 'reason.insurerNoCancel'],
  [/^The provider refused the correction: (?<message>.*)$/s, 'reason.providerRefusedCorrect'],
  [/^Cancelled by the partner: (?<amount>.+) refunded to the wallet$/, 'reason.cancelledToWallet'],
  [/^Cancelled by the partner: (?<amount>.+) to be refunded to the customer/, 'reason.cancelledToCustomer'],
  [/^Refunded by the operator: (?<words>.*)$/s, 'reason.refundedByOperator'],
  [/^From and To must be dates/i, 'reason.periodDates'],
  [/^From must not be after To$/i, 'reason.periodOrder'],
  [/^status must be one of /, 'reason.statusFilter'],
  [/^product must be one of /, 'reason.productFilter'],
  [/^A (period|statement) (covers|is) at most (?<days>\d+) days$/, 'reason.periodLong'],
  // The form itself: a character that cannot be stored, a value its schema refuses (Fastify's own
  // validation, or the API's schema on the desk). After every rule above that says `must`.
  [/ must not contain U\+0000 or an unpaired surrogate$/, 'reason.badText'],
  [/^(Body is not valid JSON|Unsupported Media Type|Body cannot be empty)/, 'reason.unreadable'],
  [/^(body|querystring|params|headers)(\/\S*)? (must|is not a field)/, 'reason.invalidRequest'],
  [/^[\w/.[\]]+ (must (NOT |not |match |be |have |equal )|is not a field)/, 'reason.notValid'],
];

/** Captured values as the catalogue's message shows them. */
function shown(t: T, name: string, value: string): string {
  if (/^\d{4}-\d\d-\d\d$/.test(value)) return value.split('-').reverse().join('.');
  if (name === 'role') return t(`role.${value}`);
  if (name === 'status') return t(`status.${value}`);
  if (name === 'product') return t(`product.${value}`);
  if (name === 'area') return t(`nav.${value.toLowerCase()}`);
  return value;
}

/** The keys the refusals above use, for the test that finds each in the catalogues. */
export const REASON_KEYS: readonly string[] = REASONS.map(([, key]) => key);

/** A refusal in the catalogue's words, or undefined when the catalogue does not know it. */
export function known(t: T, reason: string): string | undefined {
  const text = reason.replace(/^\[API\]\s*/, '');
  for (const [pattern, key] of REASONS) {
    const m = pattern.exec(text);
    if (m) {
      const values = Object.fromEntries(
        Object.entries(m.groups ?? {}).map(([k, v]) => [
          k,
          // A reason quoted in another (an order's, a provider's) is said in words too.
          k === 'message' ? (known(t, v) ?? v) : shown(t, k, v),
        ]),
      );
      return t(key, values);
    }
  }
  return undefined;
}

/**
 * A refusal as a clerk reads it: the catalogue's words, or, for one the catalogue does not know
 * (Fastify's own 4xx, say), a sentence in the page's language followed by the English reason.
 */
export const say = (t: T, reason: string): string =>
  known(t, reason) ?? t('reason.other', { reason: reason.replace(/^\[API\]\s*/, '') });

/** What a stored text says (an order's failure, a delivery's error): in words when known, else as it is. */
export const stored = (t: T, text: string): string => known(t, text) ?? text;
