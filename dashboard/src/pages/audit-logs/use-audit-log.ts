import { useCallback, useEffect, useRef, useState } from "react";
import { useClient } from "urql";
import { print } from "graphql";
import { useLiveConnection } from "../../app/live-connection";
import { problemOf } from "../../kit";
import {
  AuditChainHeadDocument,
  AuditEventRecordedDocument,
  AuditEventsAfterSeqDocument,
  AuditEventsDocument,
  type AuditEventFieldsFragment,
  type AuditEventFilter,
} from "../../gql/graphql";

export type AuditEvent = AuditEventFieldsFragment;
export type LiveState = "off" | "connecting" | "live" | "polling";

const PAGE_SIZE = 100;
/** The spec's refresh interval when the live connection is unavailable. */
export const POLL_INTERVAL_MS = 30_000;
/** How long the socket may take to connect before the view starts polling meanwhile. */
const CONNECT_GRACE_MS = 5_000;

const newestFirst = (a: AuditEvent, b: AuditEvent) =>
  a.timestamp === b.timestamp ? (a.id < b.id ? 1 : -1) : a.timestamp < b.timestamp ? 1 : -1;
/**
 * `fresh` (newest first) into `list` (newest first). Usually fresh events are all newer and go on top;
 * a gap fill that answers after a newer live event has arrived puts older ones below it, in place.
 */
function mergeNewestFirst(fresh: AuditEvent[], list: AuditEvent[]): AuditEvent[] {
  const merged = [...fresh, ...list];
  const oldestFresh = fresh[fresh.length - 1];
  return oldestFresh && list[0] && newestFirst(oldestFresh, list[0]) > 0 ? merged.sort(newestFirst) : merged;
}
const maxSeq = (a: string, b: string | null) => (b !== null && BigInt(b) > BigInt(a) ? b : a);

/**
 * The events of a filter: pages by cursor, newest first, and in live mode every new match as it is
 * committed (the subscription), or every 30 s when the socket is unavailable. Whatever the socket
 * missed while down is filled in from the last chain position seen, so nothing is skipped silently.
 */
export function useAuditLog(filter: AuditEventFilter, filterKey: string, live: boolean, onLive: (events: AuditEvent[]) => void) {
  const client = useClient();
  const { socket, onSocketState } = useLiveConnection();
  const [events, setEvents] = useState<AuditEvent[]>([]);
  const [pending, setPending] = useState<AuditEvent[]>([]);
  const [pageInfo, setPageInfo] = useState<{ hasNextPage: boolean; endCursor: string | null; total: number; totalCapped: boolean } | null>(
    null,
  );
  const [loading, setLoading] = useState(true);
  /** The first page of the current filter is in: live updates start from its chain position. */
  const [ready, setReady] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [liveState, setLiveState] = useState<LiveState>("off");
  const [liveAdded, setLiveAdded] = useState(0);
  const seen = useRef(new Set<string>());
  const lastSeq = useRef("0");
  const holdNew = useRef(false);
  /** The events held behind the "N new" marker (mirrored in `pending` for rendering). */
  const held = useRef<AuditEvent[]>([]);
  const generation = useRef(0);
  const onLiveRef = useRef(onLive);
  onLiveRef.current = onLive;
  const filterRef = useRef(filter);
  filterRef.current = filter;

  const accept = useCallback((incoming: AuditEvent[], gen: number) => {
    if (gen !== generation.current) return;
    const fresh = incoming.filter((event) => !seen.current.has(event.id));
    for (const event of incoming) lastSeq.current = maxSeq(lastSeq.current, event.seq);
    if (!fresh.length) return;
    fresh.forEach((event) => seen.current.add(event.id));
    fresh.sort(newestFirst);
    setLiveAdded((count) => count + fresh.length);
    if (holdNew.current) {
      held.current = mergeNewestFirst(fresh, held.current);
      setPending(held.current);
    } else setEvents((list) => mergeNewestFirst(fresh, list));
    onLiveRef.current(fresh);
  }, []);

  const fillGap = useCallback(
    async (gen: number) => {
      // Its own cursor: live events arriving meanwhile move lastSeq past positions this fill has not read yet.
      let after = lastSeq.current;
      for (let round = 0; round < 50 && gen === generation.current; round++) {
        const result = await client.query(AuditEventsAfterSeqDocument, { afterSeq: after, filter: filterRef.current }).toPromise();
        const page = result.data?.auditEventsAfterSeq;
        if (!page) return;
        accept(page.events, gen);
        after = page.throughSeq;
        lastSeq.current = maxSeq(lastSeq.current, page.throughSeq);
        if (!page.hasMore) return;
      }
    },
    [accept, client],
  );

  // First page whenever the filter changes.
  useEffect(() => {
    const gen = ++generation.current;
    seen.current = new Set();
    lastSeq.current = "0";
    setEvents([]);
    held.current = [];
    setPending([]);
    setLiveAdded(0);
    setPageInfo(null);
    setReady(false);
    setLoading(true);
    setError(null);
    void (async () => {
      const head = await client.query(AuditChainHeadDocument, {}).toPromise();
      const result = await client.query(AuditEventsDocument, { filter, first: PAGE_SIZE }).toPromise();
      if (gen !== generation.current) return;
      setLoading(false);
      if (result.error || !result.data) {
        setError(result.error ? problemOf(result.error) : "The events could not be loaded");
        return;
      }
      lastSeq.current = head.data?.auditChainHeadSeq ?? "0";
      const nodes = result.data.auditEvents.nodes;
      nodes.forEach((event) => {
        seen.current.add(event.id);
        lastSeq.current = maxSeq(lastSeq.current, event.seq);
      });
      setEvents(nodes);
      setPageInfo(result.data.auditEvents.pageInfo);
      setReady(true);
    })();
    // filterKey stands for filter's content.
  }, [client, filterKey]);

  const loadMore = useCallback(async () => {
    if (!pageInfo?.hasNextPage || loading) return;
    const gen = generation.current;
    setLoading(true);
    const result = await client
      .query(AuditEventsDocument, { filter: filterRef.current, first: PAGE_SIZE, after: pageInfo.endCursor })
      .toPromise();
    if (gen !== generation.current) return;
    setLoading(false);
    if (!result.data) return setError(result.error ? problemOf(result.error) : "More events could not be loaded");
    const nodes = result.data.auditEvents.nodes.filter((event) => !seen.current.has(event.id));
    nodes.forEach((event) => seen.current.add(event.id));
    setEvents((list) => [...list, ...nodes]);
    setPageInfo(result.data.auditEvents.pageInfo);
  }, [client, loading, pageInfo]);

  // Live: the subscription while the socket is up, polling while it is not, gap fill on every (re)connection.
  useEffect(() => {
    if (!live || !ready) {
      if (!live) setLiveState("off");
      return;
    }
    const gen = generation.current;
    let polling: ReturnType<typeof setInterval> | null = null;
    let connected = false;
    const startPolling = () => {
      if (polling || gen !== generation.current) return;
      setLiveState("polling");
      void fillGap(gen);
      polling = setInterval(() => void fillGap(gen), POLL_INTERVAL_MS);
    };
    const stopPolling = () => {
      if (polling) clearInterval(polling);
      polling = null;
    };
    const grace = setTimeout(() => !connected && startPolling(), CONNECT_GRACE_MS);
    const unlisten = onSocketState((state) => {
      if (state === "connected") {
        connected = true;
        stopPolling();
        setLiveState("live");
        void fillGap(gen);
      } else if (state === "closed") {
        connected = false;
        startPolling();
      } else if (!polling) setLiveState("connecting");
    });
    setLiveState("connecting");
    const unsubscribe = socket.subscribe(
      { query: print(AuditEventRecordedDocument), variables: { filter: filterRef.current } },
      {
        next: (message) => {
          const event = (message.data as { auditEventRecorded?: AuditEvent } | null | undefined)?.auditEventRecorded;
          if (event) accept([event], gen);
        },
        error: () => startPolling(),
        complete: () => undefined,
      },
    );
    return () => {
      clearTimeout(grace);
      stopPolling();
      unlisten();
      unsubscribe();
    };
  }, [live, ready, filterKey, socket, onSocketState, fillGap, accept]);

  /** While the reader is scrolled away from the top, new events wait behind an "N new" marker. */
  const setHoldNew = useCallback((hold: boolean) => {
    holdNew.current = hold;
    if (!hold && held.current.length) {
      const released = held.current;
      held.current = [];
      setPending([]);
      setEvents((current) => mergeNewestFirst(released, current));
    }
  }, []);

  return { events, pending, pageInfo, loading, error, loadMore, liveState, liveAdded, setHoldNew };
}
