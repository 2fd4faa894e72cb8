// Package eventstore groups the event store adapters (sqlite, postgres, esdb, and memory for
// fast unit tests) and their shared conformance suite (storetest). Each adapter implements the
// same contract, which the consumers (commands, projections) declare as narrower ports of their
// own.
package eventstore
