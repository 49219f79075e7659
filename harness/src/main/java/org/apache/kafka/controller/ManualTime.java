/*
 * Part of kraftcheck's conformance harness. Licensed under the Apache License, Version 2.0.
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.errors.TimeoutException;
import org.apache.kafka.common.utils.Time;

import java.util.function.Supplier;

/**
 * A clock that moves only when the harness moves it, like Kafka's test MockTime (which
 * lives in kafka-clients' test jar, so the harness has its own). It starts at fixed values
 * so that runs are reproducible.
 */
final class ManualTime implements Time {
    /** Wall-clock milliseconds at the start (2023-11-14T22:13:20Z). */
    private static final long START_MS = 1_700_000_000_000L;
    /** Monotonic nanoseconds at the start. */
    private static final long START_NS = 1_000_000_000L;

    private long elapsedNs = 0;

    @Override
    public synchronized long milliseconds() {
        return START_MS + elapsedNs / 1_000_000L;
    }

    @Override
    public synchronized long nanoseconds() {
        return START_NS + elapsedNs;
    }

    @Override
    public void sleep(long ms) {
        advanceMs(ms);
    }

    @Override
    public void waitObject(Object obj, Supplier<Boolean> condition, long deadlineMs) {
        // Nothing else moves this clock, so waiting cannot help: jump to the deadline.
        if (condition.get()) {
            return;
        }
        long now = milliseconds();
        if (deadlineMs > now) {
            advanceMs(deadlineMs - now);
        }
        if (!condition.get()) {
            throw new TimeoutException("Condition not satisfied before deadline");
        }
    }

    synchronized void advanceMs(long ms) {
        if (ms < 0) {
            throw new IllegalArgumentException("time cannot go backwards: " + ms + " ms");
        }
        elapsedNs += ms * 1_000_000L;
    }
}
