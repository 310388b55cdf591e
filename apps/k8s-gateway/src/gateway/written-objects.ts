// The objects this gateway last wrote, as the API answered the write: the base of the next status write to
// the same object, so a policy's or plan's run of status writes costs one request each instead of a read
// and a write (a fleet's policy makes five or six). Optimistic concurrency keeps it safe: the write carries
// the remembered resourceVersion, so if anyone wrote in between the API answers 409, the entry is gone
// (taken before the write) and the retry reads the object afresh.
// An entry is needed only until the informers hold that write: the watch delivers one object's changes in
// order, so once it delivers the remembered resourceVersion the informers' copy is this very write, and
// any later write (a force-reconcile's annotation, a user's edit of the spec) replaces it there. The entry
// is then let go and the next write starts from the informers' copy, which stays current, instead of
// from a remembered version someone else has written over (a 409, a read and a second write). A version
// delivered before the remembered one is older than it and changes nothing; resourceVersions are only
// compared for equality (they are opaque).
import type { KubernetesObject } from '@kubernetes/client-node';

export class WrittenObjects {
  private readonly objects = new Map<string, KubernetesObject>();

  constructor(private readonly capacity: number) {}

  /** The remembered object, removed: a write based on it puts back what the API returns, or nothing. */
  take(key: string): KubernetesObject | undefined {
    const object = this.objects.get(key);
    this.objects.delete(key);
    return object;
  }

  /** Remembers the API's answer to a write (newest last; the oldest goes beyond `capacity`). */
  remember(key: string, object: KubernetesObject | undefined): void {
    this.objects.delete(key);
    if (object?.metadata?.resourceVersion === undefined) return;
    this.objects.set(key, object);
    if (this.objects.size > this.capacity) this.objects.delete(this.objects.keys().next().value as string);
  }

  /**
   * An informer event of the object: its resourceVersion, or undefined for a delete. The entry goes once
   * the informers hold the remembered write (or the object is gone); an earlier version keeps it.
   */
  observed(key: string, resourceVersion: string | undefined): void {
    const remembered = this.objects.get(key)?.metadata?.resourceVersion;
    if (remembered === undefined) return;
    if (resourceVersion === undefined || resourceVersion === remembered) this.objects.delete(key);
  }

  forget(key: string): void {
    this.objects.delete(key);
  }

  get size(): number {
    return this.objects.size;
  }
}
