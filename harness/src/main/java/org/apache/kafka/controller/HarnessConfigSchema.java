/*
 * Part of kraftcheck's conformance harness. Licensed under the Apache License, Version 2.0.
 */
package org.apache.kafka.controller;

import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.metadata.KafkaConfigSchema;
import org.apache.kafka.server.config.ConfigSynonym;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.apache.kafka.common.config.ConfigDef.Importance.HIGH;
import static org.apache.kafka.common.config.ConfigDef.Type.BOOLEAN;
import static org.apache.kafka.common.config.ConfigDef.Type.INT;

/**
 * The config schema the harness's ConfigurationControlManager uses: the two topic (and
 * broker) configs the controller's election code reads, with Kafka's defaults. It is the
 * same as FakeKafkaConfigSchema in kafka-metadata's tests, which is not in the main jar.
 */
final class HarnessConfigSchema {
    private HarnessConfigSchema() { }

    static final String MIN_INSYNC_REPLICAS = "min.insync.replicas";
    static final String UNCLEAN_LEADER_ELECTION_ENABLE = "unclean.leader.election.enable";

    static final KafkaConfigSchema INSTANCE = build();

    private static KafkaConfigSchema build() {
        Map<ConfigResource.Type, ConfigDef> configs = new HashMap<>();
        configs.put(ConfigResource.Type.BROKER, new ConfigDef()
            .define(UNCLEAN_LEADER_ELECTION_ENABLE, BOOLEAN, "false", HIGH, "")
            .define(MIN_INSYNC_REPLICAS, INT, "1", HIGH, ""));
        configs.put(ConfigResource.Type.TOPIC, new ConfigDef()
            .define(UNCLEAN_LEADER_ELECTION_ENABLE, BOOLEAN, "false", HIGH, "")
            .define(MIN_INSYNC_REPLICAS, INT, "1", HIGH, ""));
        Map<String, List<ConfigSynonym>> synonyms = new HashMap<>();
        synonyms.put(UNCLEAN_LEADER_ELECTION_ENABLE,
            List.of(new ConfigSynonym(UNCLEAN_LEADER_ELECTION_ENABLE)));
        synonyms.put(MIN_INSYNC_REPLICAS, List.of(new ConfigSynonym(MIN_INSYNC_REPLICAS)));
        return new KafkaConfigSchema(configs, synonyms);
    }
}
