/*
 * Part of kraftcheck's conformance harness. Licensed under the Apache License, Version 2.0.
 */
package org.apache.kafka.controller;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.ConfigEntry;
import org.apache.kafka.clients.admin.LogDirDescription;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.ReplicaInfo;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionReplica;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.metadata.NoOpRecord;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.apache.kafka.metadata.MetadataRecordSerde;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.MetadataVersion;

import java.io.BufferedReader;
import java.io.File;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A client of a real Kafka cluster, serving JSON lines as ConformanceHarness does: Kafka's
 * Admin, producer and consumer for the brokers' side, and the controller's own metadata log,
 * read from its directory and replayed into the controller's managers, for the controller's
 * side. The protocol is described in harness/README.md ("The cluster client").
 */
public final class ClusterClient {
    /**
     * What follows each record's number in its value: records of a realistic size, so that a
     * log outgrows one fetch (1 MiB) within seconds.
     */
    static final String PADDING = "x".repeat(200);

    /** How long one Admin call may take, in milliseconds: a paused broker never answers. */
    static final int CALL_TIMEOUT_MS = 5000;

    private String bootstrap = null;
    private Admin admin = null;
    private Producing producing = null;

    public static void main(String[] args) throws IOException {
        PrintStream protocol = new PrintStream(
            new FileOutputStream(FileDescriptor.out), false, StandardCharsets.UTF_8);
        System.setOut(System.err);
        ClusterClient client = new ClusterClient();
        Map<String, Object> ready = new LinkedHashMap<>();
        ready.put("ready", true);
        ready.put("kafkaVersion", KafkaCompat.kafkaVersion());
        ConformanceHarness.emit(protocol, Json.write(ready));
        BufferedReader in = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (!line.isBlank()) {
                ConformanceHarness.emit(protocol, client.handle(line));
            }
        }
        client.close();
        protocol.flush();
    }

    String handle(String line) {
        Map<String, Object> request;
        try {
            Object parsed = Json.parse(line);
            if (!(parsed instanceof Map)) {
                return ConformanceHarness.badRequest("a request must be a JSON object");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> map = (Map<String, Object>) parsed;
            request = map;
        } catch (Json.ParseException e) {
            return ConformanceHarness.badRequest("malformed JSON: " + e.getMessage());
        }
        try {
            Map<String, Object> response = serve(request);
            response.put("ok", true);
            return Json.write(response);
        } catch (ConformanceHarness.BadRequest e) {
            return ConformanceHarness.badRequest(e.getMessage());
        } catch (Throwable t) {
            return ConformanceHarness.fatal(t);
        }
    }

    private Map<String, Object> serve(Map<String, Object> request) throws Exception {
        Object op = request.get("op");
        if (!(op instanceof String)) {
            throw new ConformanceHarness.BadRequest("missing string field \"op\"");
        }
        switch ((String) op) {
            case "metadata":
                return metadata(request);
            case "connect":
                connect(request);
                return new LinkedHashMap<>();
            default:
                break;
        }
        if (admin == null) {
            throw new ConformanceHarness.BadRequest("no cluster yet: send {\"op\":\"connect\"} first");
        }
        switch ((String) op) {
            case "createTopic":
                return createTopic(request);
            case "logDirs":
                return logDirs(request);
            case "alterReplicaLogDir":
                return alterReplicaLogDir(request);
            case "electLeaders":
                return electLeaders(request);
            case "alterBrokerConfig":
                return alterBrokerConfig(request);
            case "brokerConfig":
                return brokerConfig(request);
            case "produceStart":
                return produceStart(request);
            case "produceStop":
                return produceStop();
            case "consume":
                return consume(request);
            default:
                throw new ConformanceHarness.BadRequest("unknown op \"" + op + "\"");
        }
    }

    // ------------------------------------------------------------------ the controller's log

    /**
     * The controller's state as its metadata log leaves it: every record of every segment in
     * the log directory, in offset order, replayed into a fresh set of controller managers
     * with QuorumController's dispatch (ControllerContext.replay). Control batches (Raft's
     * leader changes, voters) and records no manager here keeps (transactions, producer ids)
     * are skipped. A batch still being written at the end of the last segment is not read.
     */
    private Map<String, Object> metadata(Map<String, Object> request) throws IOException {
        File dir = new File(ConformanceHarness.stringField(request, "logDir", ""));
        File[] segments = dir.listFiles((d, name) -> name.endsWith(".log"));
        if (segments == null) {
            throw new ConformanceHarness.BadRequest("no such metadata log directory: " + dir);
        }
        Arrays.sort(segments);
        ControllerContext ctx = new ControllerContext(
            new ControllerContext.Settings(MetadataVersion.latestProduction(), false, 1, false, 9000),
            new ManualTime(), 1, List.of(), false);
        MetadataRecordSerde serde = new MetadataRecordSerde();
        boolean withBatches = ConformanceHarness.boolField(request, "batches", false);
        List<Object> batches = new ArrayList<>();
        long records = 0;
        long lastOffset = -1;
        for (File segment : segments) {
            // Read whole into memory, never opened for writing: the controller owns the file.
            for (KafkaCompat.LogBatch batch : KafkaCompat.readBatches(
                    ByteBuffer.wrap(Files.readAllBytes(segment.toPath())))) {
                lastOffset = batch.lastOffset;
                if (batch.control) {
                    continue;
                }
                List<Object> written = new ArrayList<>();
                for (KafkaCompat.LogRecord record : batch.records) {
                    ApiMessageAndVersion message = serde.read(
                        new ByteBufferAccessor(record.value), record.valueSize);
                    if (replayed(message.message())) {
                        ctx.replay(message.message(), record.offset);
                    }
                    if (!(message.message() instanceof NoOpRecord)) {
                        written.add(message.message().toString());
                    }
                    records++;
                }
                if (withBatches && !written.isEmpty()) {
                    Map<String, Object> entry = new LinkedHashMap<>();
                    entry.put("baseOffset", batch.baseOffset);
                    entry.put("records", written);
                    batches.add(entry);
                }
            }
        }
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("records", records);
        response.put("lastOffset", lastOffset);
        response.put("state", ctx.state());
        if (withBatches) {
            response.put("batches", batches);
        }
        return response;
    }

    /** The record types ControllerContext.replay applies; the others change no state compared. */
    private static final Set<String> REPLAYED = Set.of(
        "RegisterBrokerRecord", "UnregisterBrokerRecord", "TopicRecord", "PartitionRecord",
        "ConfigRecord", "PartitionChangeRecord", "FenceBrokerRecord", "UnfenceBrokerRecord",
        "RemoveTopicRecord", "FeatureLevelRecord", "BrokerRegistrationChangeRecord",
        "RegisterControllerRecord", "ClearElrRecord", "NoOpRecord");

    private static boolean replayed(ApiMessage message) {
        return REPLAYED.contains(message.getClass().getSimpleName());
    }

    // ------------------------------------------------------------------ Admin

    private void connect(Map<String, Object> request) {
        close();
        bootstrap = (String) ConformanceHarness.required(request, "bootstrap");
        Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(AdminClientConfig.REQUEST_TIMEOUT_MS_CONFIG, CALL_TIMEOUT_MS);
        props.put(AdminClientConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, CALL_TIMEOUT_MS);
        admin = Admin.create(props);
    }

    private Map<String, Object> createTopic(Map<String, Object> request) throws Exception {
        String name = (String) ConformanceHarness.required(request, "topic");
        List<Integer> replicas = new ArrayList<>();
        for (Object b : ConformanceHarness.listField(request, "replicas")) {
            replicas.add(ConformanceHarness.toInt(b, "replicas"));
        }
        Map<String, String> configs = new HashMap<>();
        Object given = request.get("configs");
        if (given instanceof Map) {
            for (Map.Entry<?, ?> e : ((Map<?, ?>) given).entrySet()) {
                configs.put(e.getKey().toString(), e.getValue().toString());
            }
        }
        NewTopic topic = new NewTopic(name, Map.of(0, replicas)).configs(configs);
        admin.createTopics(List.of(topic)).all().get(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        return new LinkedHashMap<>();
    }

    /** Each broker's log directories as it describes them: its error, and the replicas in it. */
    private Map<String, Object> logDirs(Map<String, Object> request) {
        Map<String, Object> brokers = new TreeMap<>();
        for (Object b : ConformanceHarness.listField(request, "brokers")) {
            int broker = ConformanceHarness.toInt(b, "brokers");
            Map<String, Object> answer = new LinkedHashMap<>();
            try {
                Map<String, LogDirDescription> dirs = admin.describeLogDirs(List.of(broker)).
                    descriptions().get(broker).get(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
                Map<String, Object> described = new TreeMap<>();
                for (Map.Entry<String, LogDirDescription> e : dirs.entrySet()) {
                    Map<String, Object> dir = new LinkedHashMap<>();
                    dir.put("error", e.getValue().error() == null ? null :
                        e.getValue().error().getClass().getSimpleName());
                    List<Object> replicas = new ArrayList<>();
                    List<Map.Entry<TopicPartition, ReplicaInfo>> held =
                        new ArrayList<>(e.getValue().replicaInfos().entrySet());
                    held.sort((x, y) -> x.getKey().toString().compareTo(y.getKey().toString()));
                    for (Map.Entry<TopicPartition, ReplicaInfo> r : held) {
                        Map<String, Object> replica = new LinkedHashMap<>();
                        replica.put("topic", r.getKey().topic());
                        replica.put("partition", r.getKey().partition());
                        replica.put("future", r.getValue().isFuture());
                        replica.put("size", r.getValue().size());
                        replicas.add(replica);
                    }
                    dir.put("replicas", replicas);
                    described.put(e.getKey(), dir);
                }
                answer.put("dirs", described);
            } catch (Exception e) {
                answer.put("unreachable", rootCause(e));
            }
            brokers.put(Integer.toString(broker), answer);
        }
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("brokers", brokers);
        return response;
    }

    private Map<String, Object> alterReplicaLogDir(Map<String, Object> request) throws Exception {
        TopicPartitionReplica replica = new TopicPartitionReplica(
            (String) ConformanceHarness.required(request, "topic"),
            ConformanceHarness.intField(request, "partition"),
            ConformanceHarness.intField(request, "broker"));
        String path = (String) ConformanceHarness.required(request, "path");
        Map<String, Object> response = new LinkedHashMap<>();
        try {
            admin.alterReplicaLogDirs(Map.of(replica, path)).all().get(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            response.put("error", null);
        } catch (ExecutionException e) {
            response.put("error", rootCause(e));
        }
        return response;
    }

    private Map<String, Object> electLeaders(Map<String, Object> request) throws Exception {
        String type = ConformanceHarness.stringField(request, "type", "unclean");
        TopicPartition partition = new TopicPartition(
            (String) ConformanceHarness.required(request, "topic"),
            ConformanceHarness.intField(request, "partition"));
        Map<String, Object> response = new LinkedHashMap<>();
        try {
            Map<TopicPartition, Optional<Throwable>> result = admin.electLeaders(
                type.equals("unclean") ? ElectionType.UNCLEAN : ElectionType.PREFERRED,
                Set.of(partition)).partitions().get(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            Optional<Throwable> error = result.getOrDefault(partition, Optional.empty());
            response.put("error", error.map(ClusterClient::rootCause).orElse(null));
        } catch (ExecutionException e) {
            response.put("error", rootCause(e));
        }
        return response;
    }

    /** A dynamic broker config set on one broker (incrementalAlterConfigs, SET). */
    private Map<String, Object> alterBrokerConfig(Map<String, Object> request) throws Exception {
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER,
            Integer.toString(ConformanceHarness.intField(request, "broker")));
        AlterConfigOp op = new AlterConfigOp(new ConfigEntry(
            (String) ConformanceHarness.required(request, "name"),
            (String) ConformanceHarness.required(request, "value")), AlterConfigOp.OpType.SET);
        admin.incrementalAlterConfigs(Map.of(broker, List.of(op))).all().get(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS);
        return new LinkedHashMap<>();
    }

    /** One config of one broker as that broker describes it (describeConfigs): what it applies. */
    private Map<String, Object> brokerConfig(Map<String, Object> request) throws Exception {
        ConfigResource broker = new ConfigResource(ConfigResource.Type.BROKER,
            Integer.toString(ConformanceHarness.intField(request, "broker")));
        String name = (String) ConformanceHarness.required(request, "name");
        ConfigEntry entry = admin.describeConfigs(List.of(broker)).all().
            get(CALL_TIMEOUT_MS, TimeUnit.MILLISECONDS).get(broker).get(name);
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("value", entry == null ? null : entry.value());
        return response;
    }

    // ------------------------------------------------------------------ records

    /**
     * A producer with acks=all writing the numbers 0, 1, 2, ... (each followed by ":" and
     * PADDING) as the values of records to
     * one partition, one at a time (the next only once the last is answered), so that each
     * number is acknowledged or failed before the next is sent and the acknowledged ones are
     * exactly the ones Kafka promised to keep.
     */
    private final class Producing implements Runnable {
        final String topic;
        final KafkaProducer<String, String> producer;
        final AtomicBoolean stop = new AtomicBoolean(false);
        final List<Long> acked = Collections.synchronizedList(new ArrayList<>());
        final Map<String, Integer> failures = Collections.synchronizedMap(new TreeMap<>());
        final Thread thread;
        volatile long sent = 0;

        Producing(String topic, int deliveryTimeoutMs) {
            this.topic = topic;
            Properties props = new Properties();
            props.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
            props.put(ProducerConfig.ACKS_CONFIG, "all");
            props.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            props.put(ProducerConfig.MAX_IN_FLIGHT_REQUESTS_PER_CONNECTION, 1);
            props.put(ProducerConfig.LINGER_MS_CONFIG, 0);
            props.put(ProducerConfig.REQUEST_TIMEOUT_MS_CONFIG, Math.min(deliveryTimeoutMs, 3000));
            props.put(ProducerConfig.DELIVERY_TIMEOUT_MS_CONFIG, deliveryTimeoutMs);
            props.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, deliveryTimeoutMs);
            props.put(ProducerConfig.KEY_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            props.put(ProducerConfig.VALUE_SERIALIZER_CLASS_CONFIG, StringSerializer.class.getName());
            this.producer = new KafkaProducer<>(props);
            this.thread = new Thread(this, "kraftcheck-producer");
            this.thread.setDaemon(true);
        }

        @Override
        public void run() {
            for (long n = 0; !stop.get(); n++) {
                sent = n + 1;
                try {
                    producer.send(new ProducerRecord<>(topic, 0, null, n + ":" + PADDING)).get();
                    acked.add(n);
                } catch (Exception e) {
                    failures.merge(rootCause(e), 1, Integer::sum);
                    try {
                        Thread.sleep(50);
                    } catch (InterruptedException ie) {
                        return;
                    }
                }
            }
        }
    }

    private Map<String, Object> produceStart(Map<String, Object> request) {
        if (producing != null) {
            throw new ConformanceHarness.BadRequest("a producer is already running");
        }
        producing = new Producing((String) ConformanceHarness.required(request, "topic"),
            ConformanceHarness.intField(request, "deliveryTimeoutMs", 10000));
        producing.thread.start();
        return new LinkedHashMap<>();
    }

    private Map<String, Object> produceStop() throws InterruptedException {
        if (producing == null) {
            throw new ConformanceHarness.BadRequest("no producer is running");
        }
        Producing done = producing;
        producing = null;
        done.stop.set(true);
        done.thread.join(60_000);
        done.producer.close(Duration.ofSeconds(5));
        Map<String, Object> response = new LinkedHashMap<>();
        response.put("sent", done.sent);
        synchronized (done.acked) {
            response.put("acked", new ArrayList<>(done.acked));
        }
        synchronized (done.failures) {
            response.put("failures", new TreeMap<>(done.failures));
        }
        return response;
    }

    /** Every record of the partition from its start to its end offset (the high watermark). */
    private Map<String, Object> consume(Map<String, Object> request) {
        String topic = (String) ConformanceHarness.required(request, "topic");
        long timeoutMs = ConformanceHarness.longField(request, "timeoutMs", 30_000);
        Properties props = new Properties();
        props.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        props.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        props.put(ConsumerConfig.KEY_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        props.put(ConsumerConfig.VALUE_DESERIALIZER_CLASS_CONFIG, StringDeserializer.class.getName());
        TopicPartition partition = new TopicPartition(topic, 0);
        List<Object> values = new ArrayList<>();
        Map<String, Object> response = new LinkedHashMap<>();
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(props)) {
            consumer.assign(List.of(partition));
            consumer.seekToBeginning(List.of(partition));
            long end = consumer.endOffsets(List.of(partition), Duration.ofMillis(timeoutMs)).get(partition);
            long deadline = System.currentTimeMillis() + timeoutMs;
            while (consumer.position(partition, Duration.ofMillis(timeoutMs)) < end
                    && System.currentTimeMillis() < deadline) {
                for (ConsumerRecord<String, String> record : consumer.poll(Duration.ofMillis(500))) {
                    String value = record.value();
                    values.add(Long.parseLong(value.substring(0, value.indexOf(':'))));
                }
            }
            response.put("endOffset", end);
            response.put("complete", consumer.position(partition, Duration.ofMillis(timeoutMs)) >= end);
        } catch (Exception e) {
            response.put("error", rootCause(e));
        }
        response.put("values", values);
        return response;
    }

    private void close() {
        if (producing != null) {
            producing.stop.set(true);
            producing.producer.close(Duration.ofSeconds(1));
            producing = null;
        }
        if (admin != null) {
            admin.close(Duration.ofSeconds(1));
            admin = null;
        }
    }

    static String rootCause(Throwable t) {
        while ((t instanceof ExecutionException || t.getCause() != null && t.getMessage() == null)
                && t.getCause() != null) {
            t = t.getCause();
        }
        return t.getClass().getSimpleName();
    }
}
