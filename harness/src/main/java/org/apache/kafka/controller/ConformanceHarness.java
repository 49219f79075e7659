/*
 * Part of kraftcheck's conformance harness. Licensed under the Apache License, Version 2.0.
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.metadata.BrokerHeartbeatReply;
import org.apache.kafka.server.common.MetadataVersion;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * Runs Kafka's KRaft controller code in-process and serves JSON lines: one request per line
 * on stdin, exactly one response line per request on stdout. Logs go to stderr. The
 * protocol is described in harness/README.md.
 */
public final class ConformanceHarness {
    /** How many times a periodic task is re-run at most when it asks to be rescheduled. */
    static final int MAX_TASK_RUNS = 20;

    /** A request the harness cannot serve as written. */
    static final class BadRequest extends RuntimeException {
        private static final long serialVersionUID = 1L;

        BadRequest(String message) {
            super(message);
        }
    }

    private ControllerContext ctx = null;

    public static void main(String[] args) throws IOException {
        // The protocol owns stdout; anything else that prints goes to stderr.
        PrintStream protocol = new PrintStream(
            new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        ConformanceHarness harness = new ConformanceHarness();
        Map<String, Object> ready = new LinkedHashMap<>();
        ready.put("ready", true);
        ready.put("kafkaVersion", KafkaCompat.kafkaVersion());
        emit(protocol, Json.write(ready));
        BufferedReader in = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            emit(protocol, harness.handle(line));
        }
        protocol.flush();
    }

    static void emit(PrintStream out, String line) {
        out.print(line);
        out.print('\n');
        out.flush();
    }

    /** Serves one request line and returns the response line. */
    String handle(String line) {
        Map<String, Object> request;
        try {
            Object parsed = Json.parse(line);
            if (!(parsed instanceof Map)) {
                return badRequest("a request must be a JSON object");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> map = (Map<String, Object>) parsed;
            request = map;
        } catch (Json.ParseException e) {
            return badRequest("malformed JSON: " + e.getMessage());
        }
        try {
            return Json.write(serve(request));
        } catch (BadRequest e) {
            return badRequest(e.getMessage());
        } catch (Throwable t) {
            return fatal(t);
        }
    }

    private Map<String, Object> serve(Map<String, Object> request) {
        Object opValue = request.get("op");
        if (!(opValue instanceof String)) {
            throw new BadRequest("missing string field \"op\"");
        }
        String op = (String) opValue;
        if (op.equals("reset")) {
            reset(request);
            return response(new LinkedHashMap<>(Map.of("error", "NONE")));
        }
        if (ctx == null) {
            throw new BadRequest("no controller yet: send {\"op\":\"reset\"} first");
        }
        ctx.written.clear();
        Map<String, Object> fields = new LinkedHashMap<>();
        fields.put("error", "NONE");
        try {
            switch (op) {
                case "register":
                    register(request, fields);
                    break;
                case "heartbeat":
                    heartbeat(request, fields);
                    break;
                case "expire":
                    ctx.expire(intField(request, "broker"));
                    break;
                case "fenceExpired":
                    fenceExpired(request, fields);
                    break;
                case "assign":
                    assign(request, fields);
                    break;
                case "alterPartition":
                    alterPartition(request, fields);
                    break;
                case "createPartition":
                    createPartition(request, fields);
                    break;
                case "deleteTopic":
                    fields.put("error", ctx.deleteTopic(partitionField(request)).name());
                    break;
                case "alterPartitionReassignments":
                    alterPartitionReassignments(request, fields);
                    break;
                case "electLeaders":
                    electLeaders(request, fields);
                    break;
                case "electUncleanLeaders":
                    ctx.electUncleanLeaders(MAX_TASK_RUNS);
                    break;
                case "upgradeMetadataVersion":
                    upgradeMetadataVersion(request, fields);
                    break;
                case "alterConfig":
                    alterConfig(request, fields);
                    break;
                case "failover":
                    failover(request);
                    break;
                case "state":
                    break;
                default:
                    throw new BadRequest("unknown op \"" + op + "\"");
            }
        } catch (BadRequest e) {
            throw e;
        } catch (Throwable t) {
            Errors error = mappedError(t);
            if (error == null) {
                throw t;
            }
            // The handler failed the way Kafka answers a client: no records, an error code.
            fields.clear();
            fields.put("error", error.name());
            fields.put("errorMessage", String.valueOf(t.getMessage()));
        }
        return response(fields);
    }

    private Map<String, Object> response(Map<String, Object> fields) {
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("ok", true);
        response.putAll(fields);
        response.put("records", new ArrayList<>(ctx.written));
        response.put("batches", ctx.log.size());
        response.put("state", ctx.state());
        return response;
    }

    // ------------------------------------------------------------------ ops

    private void reset(Map<String, Object> request) {
        String version = stringField(request, "metadataVersion",
            MetadataVersion.latestProduction().version());
        MetadataVersion metadataVersion;
        try {
            metadataVersion = KafkaCompat.metadataVersionFromString(version);
        } catch (IllegalArgumentException e) {
            throw new BadRequest("unknown metadataVersion \"" + version + "\": " + e.getMessage());
        }
        boolean elr = boolField(request, "elr", false);
        int minIsr = intField(request, "minIsr", 1);
        boolean unclean = boolField(request, "uncleanElection", false);
        long sessionTimeoutMs = longField(request, "sessionTimeoutMs", 9000);
        if (minIsr < 1) {
            throw new BadRequest("minIsr must be at least 1");
        }
        if (sessionTimeoutMs < 0) {
            throw new BadRequest("sessionTimeoutMs must not be negative");
        }
        ControllerContext.Settings settings = new ControllerContext.Settings(
            metadataVersion, elr, minIsr, unclean, sessionTimeoutMs);
        ctx = new ControllerContext(settings, new ManualTime(), 1, List.of(), false);
    }

    private void register(Map<String, Object> request, Map<String, Object> fields) {
        int broker = intField(request, "broker");
        Uuid incarnation = uuid(request.get("incarnation"), "incarnation");
        List<Uuid> logDirs = uuidList(request, "logDirs");
        long previousBrokerEpoch = longField(request, "previousBrokerEpoch", -1);
        boolean sessionExpired = boolField(request, "sessionExpired", false);
        if (sessionExpired) {
            ctx.expire(broker);
        }
        fields.put("brokerEpoch", ctx.register(broker, incarnation, logDirs, previousBrokerEpoch));
    }

    private void heartbeat(Map<String, Object> request, Map<String, Object> fields) {
        int broker = intField(request, "broker");
        long brokerEpoch = longField(request, "brokerEpoch");
        boolean wantFence = boolField(request, "wantFence", false);
        boolean wantShutdown = boolField(request, "wantShutdown", false);
        List<Uuid> offlineLogDirs = uuidList(request, "offlineLogDirs");
        boolean timedOut = boolField(request, "timedOut", false);
        BrokerHeartbeatRequestData heartbeat =
            ctx.heartbeatRequest(broker, brokerEpoch, wantFence, wantShutdown, offlineLogDirs);
        // KIP-1066: absent for CordonedLogDirs null (before the broker has caught up)
        if (request.get("cordonedLogDirs") != null) {
            KafkaCompat.setCordonedLogDirs(heartbeat, uuidList(request, "cordonedLogDirs"));
        }
        // QuorumController tracks the contact first, outside the event queue.
        ctx.trackHeartbeat(broker, brokerEpoch);
        if (timedOut) {
            // The write event timed out in the queue: the broker sees REQUEST_TIMED_OUT and
            // the controller runs processExpiredBrokerHeartbeat, whose own failure is
            // swallowed by QuorumController (reported here as expiredHeartbeatError).
            fields.put("error", Errors.REQUEST_TIMED_OUT.name());
            String expiredError = Errors.NONE.name();
            try {
                ctx.expiredHeartbeat(heartbeat);
            } catch (Throwable t) {
                Errors error = mappedError(t);
                if (error == null) {
                    throw t;
                }
                expiredError = error.name();
            }
            fields.put("expiredHeartbeatError", expiredError);
            return;
        }
        BrokerHeartbeatReply reply = ctx.heartbeat(heartbeat);
        fields.put("isCaughtUp", reply.isCaughtUp());
        fields.put("isFenced", reply.isFenced());
        fields.put("inControlledShutdown", reply.inControlledShutdown());
        fields.put("shouldShutDown", reply.shouldShutDown());
    }

    private void fenceExpired(Map<String, Object> request, Map<String, Object> fields) {
        int broker = intField(request, "broker");
        ctx.expire(broker);
        fields.put("fenced", ctx.fenceStaleBrokers(MAX_TASK_RUNS));
    }

    private void assign(Map<String, Object> request, Map<String, Object> fields) {
        int broker = intField(request, "broker");
        long brokerEpoch = longField(request, "brokerEpoch");
        int partition = partitionField(request);
        Uuid dir = uuid(request.get("dir"), "dir");
        Errors[] errors = ctx.assign(broker, brokerEpoch, partition, dir);
        fields.put("error", errors[0].name());
        fields.put("partitionError", errors[1].name());
    }

    private void alterPartition(Map<String, Object> request, Map<String, Object> fields) {
        int broker = intField(request, "broker");
        long brokerEpoch = longField(request, "brokerEpoch");
        int partition = partitionField(request);
        int leaderEpoch = intField(request, "leaderEpoch");
        int partitionEpoch = intField(request, "partitionEpoch");
        List<AlterPartitionRequestData.BrokerState> isr = new ArrayList<>();
        for (Object entry : listField(request, "isr")) {
            if (entry instanceof List && ((List<?>) entry).size() == 2) {
                List<?> pair = (List<?>) entry;
                isr.add(new AlterPartitionRequestData.BrokerState().
                    setBrokerId(toInt(pair.get(0), "isr broker id")).
                    setBrokerEpoch(toLong(pair.get(1), "isr broker epoch")));
            } else {
                throw new BadRequest("each isr entry must be [brokerId, brokerEpoch]");
            }
        }
        int leaderRecoveryState = intField(request, "leaderRecoveryState", 0);
        if (leaderRecoveryState < Byte.MIN_VALUE || leaderRecoveryState > Byte.MAX_VALUE) {
            throw new BadRequest("leaderRecoveryState out of range");
        }
        Errors[] errors = ctx.alterPartition(broker, brokerEpoch, partition, leaderEpoch,
            partitionEpoch, isr, (byte) leaderRecoveryState);
        fields.put("error", errors[0].name());
        fields.put("partitionError", errors[1].name());
    }

    private void createPartition(Map<String, Object> request, Map<String, Object> fields) {
        int partition = partitionField(request);
        List<Integer> replicas = new ArrayList<>();
        for (Object replica : listField(request, "replicas")) {
            replicas.add(toInt(replica, "replica"));
        }
        fields.put("error", ctx.createPartition(partition, replicas).name());
    }

    /** The target replicas, or no "replicas" field (null) to cancel the reassignment under way. */
    private void alterPartitionReassignments(Map<String, Object> request, Map<String, Object> fields) {
        int partition = partitionField(request);
        List<Integer> replicas = null;
        if (request.get("replicas") != null) {
            replicas = new ArrayList<>();
            for (Object replica : listField(request, "replicas")) {
                replicas.add(toInt(replica, "replica"));
            }
        }
        Errors[] errors = ctx.alterPartitionReassignment(partition, replicas);
        fields.put("error", errors[0].name());
        fields.put("partitionError", errors[1].name());
    }

    private void alterConfig(Map<String, Object> request, Map<String, Object> fields) {
        String key = stringField(request, "key", null);
        if (!HarnessConfigSchema.MIN_INSYNC_REPLICAS.equals(key)
                && !HarnessConfigSchema.UNCLEAN_LEADER_ELECTION_ENABLE.equals(key)) {
            throw new BadRequest("key must be \"" + HarnessConfigSchema.MIN_INSYNC_REPLICAS + "\" or \""
                + HarnessConfigSchema.UNCLEAN_LEADER_ELECTION_ENABLE + "\"");
        }
        String value = stringField(request, "value", null);
        if (value == null) {
            throw new BadRequest("missing string field \"value\"");
        }
        fields.put("error", ctx.alterTopicConfig(key, value).name());
    }

    private void electLeaders(Map<String, Object> request, Map<String, Object> fields) {
        int partition = partitionField(request);
        String type = stringField(request, "electionType", null);
        ElectionType electionType;
        if ("unclean".equals(type)) {
            electionType = ElectionType.UNCLEAN;
        } else if ("preferred".equals(type)) {
            electionType = ElectionType.PREFERRED;
        } else {
            throw new BadRequest("electionType must be \"unclean\" or \"preferred\"");
        }
        Errors[] errors = ctx.electLeaders(partition, electionType);
        fields.put("error", errors[0].name());
        fields.put("partitionError", errors[1].name());
    }

    private void upgradeMetadataVersion(Map<String, Object> request, Map<String, Object> fields) {
        String version = stringField(request, "to", null);
        if (version == null) {
            throw new BadRequest("missing string field \"to\"");
        }
        MetadataVersion target;
        try {
            target = KafkaCompat.metadataVersionFromString(version);
        } catch (IllegalArgumentException e) {
            throw new BadRequest("unknown metadata version \"" + version + "\": " + e.getMessage());
        }
        fields.put("error", ctx.upgradeMetadataVersion(target).name());
    }

    private void failover(Map<String, Object> request) {
        int keep = intField(request, "batches");
        if (keep < 0 || keep > ctx.log.size()) {
            throw new BadRequest("batches must be between 0 and " + ctx.log.size());
        }
        List<List<ControllerContext.LoggedRecord>> kept = new ArrayList<>(ctx.log.subList(0, keep));
        ctx = new ControllerContext(ctx.settings, ctx.time, ctx.claimEpoch + 1, kept, true);
    }

    // ------------------------------------------------------------------ errors

    /**
     * The error Kafka would answer with for this exception, or null when Kafka would not map
     * it to a client error (a bug or an unexpected state: the harness reports it as fatal).
     */
    static Errors mappedError(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException)
                && t.getCause() != null) {
            t = t.getCause();
        }
        Errors error = Errors.forException(t);
        if (t instanceof ApiException || error != Errors.UNKNOWN_SERVER_ERROR) {
            return error;
        }
        return null;
    }

    static String badRequest(String what) {
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("ok", false);
        response.put("badRequest", what);
        return Json.write(response);
    }

    static String fatal(Throwable t) {
        System.err.println("kraftcheck harness: unexpected failure");
        t.printStackTrace(System.err);
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("ok", false);
        response.put("fatal", t.getClass().getName() + ": " + t.getMessage());
        return Json.write(response);
    }

    // ------------------------------------------------------------------ fields

    static Object required(Map<String, Object> request, String key) {
        if (!request.containsKey(key) || request.get(key) == null) {
            throw new BadRequest("missing field \"" + key + "\"");
        }
        return request.get(key);
    }

    static int intField(Map<String, Object> request, String key) {
        return toInt(required(request, key), key);
    }

    static int intField(Map<String, Object> request, String key, int defaultValue) {
        Object value = request.get(key);
        return value == null ? defaultValue : toInt(value, key);
    }

    static long longField(Map<String, Object> request, String key) {
        return toLong(required(request, key), key);
    }

    static long longField(Map<String, Object> request, String key, long defaultValue) {
        Object value = request.get(key);
        return value == null ? defaultValue : toLong(value, key);
    }

    static boolean boolField(Map<String, Object> request, String key, boolean defaultValue) {
        Object value = request.get(key);
        if (value == null) {
            return defaultValue;
        }
        if (!(value instanceof Boolean)) {
            throw new BadRequest("field \"" + key + "\" must be true or false");
        }
        return (Boolean) value;
    }

    static String stringField(Map<String, Object> request, String key, String defaultValue) {
        Object value = request.get(key);
        if (value == null) {
            return defaultValue;
        }
        if (!(value instanceof String)) {
            throw new BadRequest("field \"" + key + "\" must be a string");
        }
        return (String) value;
    }

    static List<?> listField(Map<String, Object> request, String key) {
        Object value = request.get(key);
        if (value == null) {
            return List.of();
        }
        if (!(value instanceof List)) {
            throw new BadRequest("field \"" + key + "\" must be a list");
        }
        return (List<?>) value;
    }

    static int partitionField(Map<String, Object> request) {
        int partition = intField(request, "partition");
        if (partition < 0) {
            throw new BadRequest("partition must not be negative");
        }
        return partition;
    }

    static long toLong(Object value, String what) {
        if (!(value instanceof Long)) {
            throw new BadRequest("\"" + what + "\" must be an integer");
        }
        return (Long) value;
    }

    static int toInt(Object value, String what) {
        long v = toLong(value, what);
        if (v < Integer.MIN_VALUE || v > Integer.MAX_VALUE) {
            throw new BadRequest("\"" + what + "\" is out of the int range");
        }
        return (int) v;
    }

    static Uuid uuid(Object value, String what) {
        if (!(value instanceof List) || ((List<?>) value).size() != 2) {
            throw new BadRequest("\"" + what + "\" must be a UUID as [mostSignificantBits, leastSignificantBits]");
        }
        List<?> pair = (List<?>) value;
        return new Uuid(toLong(pair.get(0), what), toLong(pair.get(1), what));
    }

    private static List<Uuid> uuidList(Map<String, Object> request, String key) {
        List<Uuid> out = new ArrayList<>();
        for (Object value : listField(request, key)) {
            out.add(uuid(value, key));
        }
        return out;
    }
}
