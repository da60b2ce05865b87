import type { Db } from '../db/database.ts';
import { findPartner, type PartnerWithSecrets } from '../db/repos/partners.ts';
import type { SecretBox } from '../secrets/secret-box.ts';

/** {@link PartnerDirectory.cached}'s answer when the cache cannot say. */
export const MISS: unique symbol = Symbol('not cached');

/**
 * Partners as request authentication sees them, cached briefly so that a signed request costs no
 * database round trip. Changes made through this instance apply at once; other instances see them
 * within `ttlMs`. Secrets are decrypted when a partner is loaded, so a cached partner costs none.
 * The directory also holds the key ring that the operator's use cases encrypt new secrets with.
 */
export class PartnerDirectory {
  private readonly cache = new Map<string, { at: number; partner: PartnerWithSecrets | undefined }>();

  private readonly db: Db;
  readonly box: SecretBox;
  private readonly ttlMs: number;

  constructor(db: Db, box: SecretBox, ttlMs = 1000) {
    this.db = db;
    this.box = box;
    this.ttlMs = ttlMs;
  }

  /** Reads in flight: the requests of one partner arriving during a refresh share its one query. */
  private readonly loading = new Map<string, Promise<PartnerWithSecrets | undefined>>();

  /**
   * The cached answer while it is fresh: a partner, or undefined for an id known not to exist;
   * MISS when only {@link get} can tell (a request authenticates without a promise on a hit).
   */
  cached(id: string): PartnerWithSecrets | undefined | typeof MISS {
    const hit = this.cache.get(id);
    if (!hit) return MISS;
    const now = Date.now();
    // Fresh for ttlMs, and never past the moment a previous secret's 24 h end (decision 0040).
    const changeAt = hit.partner?.secretsChangeAt;
    return now - hit.at < this.ttlMs && !(changeAt && changeAt.getTime() <= now) ? hit.partner : MISS;
  }

  async get(id: string): Promise<PartnerWithSecrets | undefined> {
    const known = this.cached(id);
    if (known !== MISS) return known;
    const now = Date.now();
    let pending = this.loading.get(id);
    if (!pending) {
      const mine: Promise<PartnerWithSecrets | undefined> = this.load(id, now).finally(() => {
        if (this.loading.get(id) === mine) this.loading.delete(id);
      });
      pending = mine;
      this.loading.set(id, pending);
    }
    return pending;
  }

  /** Bumped by invalidate: a read that started before a change must not put the old row back. */
  private generation = 0;

  private async load(id: string, now: number): Promise<PartnerWithSecrets | undefined> {
    const generation = this.generation;
    const partner = await findPartner(this.db, id, this.box);
    if (generation !== this.generation) return partner;
    // Unknown ids are cached too, so a flood of bad ids cannot turn into a flood of queries.
    if (this.cache.size > 10_000) this.cache.clear();
    this.cache.set(id, { at: now, partner });
    return partner;
  }

  invalidate(id: string): void {
    this.cache.delete(id);
    this.loading.delete(id);
    this.generation++;
  }
}
