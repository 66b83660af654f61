"""The server's metrics in Prometheus's text format, in a registry of
the server's own (two servers in one process count apart)."""

from __future__ import annotations

from collections.abc import Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    """The counters, gauges and the feed latency histogram of a server."""

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.accepted = Counter("etalis_events_accepted", "Events accepted by a rule set's engine",
                                ["ruleset"], registry=r)
        self.rejected = Counter("etalis_events_rejected", "Events rejected (bad item, out of order, ...)",
                                ["ruleset"], registry=r)
        self.detections = Counter("etalis_detections", "Detections by rule set and event name",
                                  ["ruleset", "event"], registry=r)
        self.pending = Gauge("etalis_pending_goals", "Pending goals by rule set and rule (a label or 'line N')",
                             ["ruleset", "rule"], registry=r)
        self.latency = Histogram("etalis_feed_latency_seconds",
                                 "Time from a request's events to its detections (engine and checkpoint)",
                                 ["ruleset"], buckets=LATENCY_BUCKETS, registry=r)
        self.missed = Counter("etalis_subscriber_missed_detections",
                              "Detections that fell out of the buffer before a subscriber read them",
                              ["ruleset", "kind"], registry=r)
        self.webhook = Counter("etalis_webhook_deliveries", "Webhook delivery attempts by outcome",
                               ["ruleset", "outcome"], registry=r)
        self.subscribers = Gauge("etalis_subscribers", "Connected Server-Sent Events subscribers",
                                 ["ruleset"], registry=r)
        self.rulesets = Gauge("etalis_rulesets", "Registered rule sets", registry=r)

    def set_pending(self, ruleset: str, by_rule: Mapping[str, int]) -> None:
        for rule, n in by_rule.items():
            self.pending.labels(ruleset, rule).set(n)

    def forget(self, ruleset: str, rules: Mapping[str, int]) -> None:
        """Drop the gauges of a rule set that is gone."""
        series = [(self.pending, (ruleset, rule)) for rule in rules] + [(self.subscribers, (ruleset,))]
        for gauge, labels in series:
            try:
                gauge.remove(*labels)
            except KeyError:    # never set
                pass

    def text(self) -> bytes:
        return generate_latest(self.registry)
