/*
 * Part of kraftcheck's conformance harness. Licensed under the Apache License, Version 2.0.
 */
package org.apache.kafka.controller;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.common.ElectionType;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.StaleBrokerEpochException;
import org.apache.kafka.common.message.AlterPartitionReassignmentsRequestData;
import org.apache.kafka.common.message.AlterPartitionReassignmentsResponseData;
import org.apache.kafka.common.message.AlterPartitionRequestData;
import org.apache.kafka.common.message.AlterPartitionResponseData;
import org.apache.kafka.common.message.AssignReplicasToDirsRequestData;
import org.apache.kafka.common.message.AssignReplicasToDirsResponseData;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.BrokerRegistrationRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.ElectLeadersRequestData;
import org.apache.kafka.common.message.ElectLeadersResponseData;
import org.apache.kafka.common.message.RequestHeaderData;
import org.apache.kafka.common.metadata.BrokerRegistrationChangeRecord;
import org.apache.kafka.common.metadata.ClearElrRecord;
import org.apache.kafka.common.metadata.ConfigRecord;
import org.apache.kafka.common.metadata.FeatureLevelRecord;
import org.apache.kafka.common.metadata.FenceBrokerRecord;
import org.apache.kafka.common.metadata.NoOpRecord;
import org.apache.kafka.common.metadata.PartitionChangeRecord;
import org.apache.kafka.common.metadata.PartitionRecord;
import org.apache.kafka.common.metadata.RegisterBrokerRecord;
import org.apache.kafka.common.metadata.RegisterControllerRecord;
import org.apache.kafka.common.metadata.RemoveTopicRecord;
import org.apache.kafka.common.metadata.TopicRecord;
import org.apache.kafka.common.metadata.UnfenceBrokerRecord;
import org.apache.kafka.common.metadata.UnregisterBrokerRecord;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.common.security.auth.KafkaPrincipal;
import org.apache.kafka.common.security.auth.SecurityProtocol;
import org.apache.kafka.metadata.BrokerHeartbeatReply;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.metadata.BrokerRegistrationReply;
import org.apache.kafka.metadata.FinalizedControllerFeatures;
import org.apache.kafka.metadata.PartitionRegistration;
import org.apache.kafka.metadata.VersionRange;
import org.apache.kafka.metadata.placement.StripedReplicaPlacer;
import org.apache.kafka.server.common.ApiMessageAndVersion;
import org.apache.kafka.server.common.EligibleLeaderReplicasVersion;
import org.apache.kafka.server.common.Feature;
import org.apache.kafka.server.common.KRaftVersion;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * Kafka's controller managers, assembled as ReplicationControlManagerTest's
 * ReplicationControlTestContext assembles them, plus what QuorumController adds around
 * them: an in-memory stand-in for the Raft log (a list of batches with offsets), the
 * replay of each written record into the managers (QuorumController.replay), and the glue
 * QuorumController puts around each handler.
 *
 * <p>Every method runs one controller event to completion: the handler's records are
 * appended as one batch and replayed at once (as if committed at once), and time only
 * moves when {@link #expire} moves it.
 */
final class ControllerContext {
    /** The settings given by "reset"; a failover builds the new context from the same ones. */
    static final class Settings {
        final MetadataVersion metadataVersion;
        final boolean elr;
        final int minIsr;
        final boolean uncleanElection;
        final long sessionTimeoutMs;

        Settings(MetadataVersion metadataVersion, boolean elr, int minIsr,
                 boolean uncleanElection, long sessionTimeoutMs) {
            this.metadataVersion = metadataVersion;
            this.elr = elr;
            this.minIsr = minIsr;
            this.uncleanElection = uncleanElection;
            this.sessionTimeoutMs = sessionTimeoutMs;
        }
    }

    /** One record of the log: its offset and the record as the handler returned it. */
    static final class LoggedRecord {
        final long offset;
        final ApiMessageAndVersion record;

        LoggedRecord(long offset, ApiMessageAndVersion record) {
            this.offset = offset;
            this.record = record;
        }
    }

    /** The cluster id every registration must carry. */
    static final String CLUSTER_ID = "kraftcheck-cluster-0000";

    /** The finalized kraft.version the harness's Raft layer reports (as RaftClient.kraftVersion()). */
    static final KRaftVersion KRAFT_VERSION = KRaftVersion.LATEST_PRODUCTION;

    /** An AlterPartition/AssignReplicasToDirs topic id for a partition whose topic does not exist. */
    static Uuid unknownTopicId(int partition) {
        return new Uuid(0x7fffL, partition);
    }

    static String topicName(int partition) {
        return "p" + partition;
    }

    final Settings settings;
    final ManualTime time;
    final int claimEpoch;
    final SnapshotRegistry snapshotRegistry;
    final FeatureControlManager featureControl;
    final ClusterControlManager clusterControl;
    final ConfigurationControlManager configurationControl;
    final ReplicationControlManager replicationControl;

    /** The log: a list of batches. Records of dropped batches are gone for good. */
    final List<List<LoggedRecord>> log = new ArrayList<>();
    /** The offset the next record will take (offsetControl.nextWriteOffset()'s stand-in). */
    long nextOffset;
    /**
     * Every (broker id, epoch) key the harness has seen handed to the heartbeat tracker
     * (trackBrokerHeartbeat and activate()), because the tracker's map is private.
     */
    final Set<BrokerIdAndEpoch> trackedKeys = new LinkedHashSet<>();
    /** The records written while serving the current request, as strings. */
    final List<String> written = new ArrayList<>();

    /**
     * Builds a brand-new active controller whose log is the given batches (none for "reset"),
     * replays them with their offsets, and activates it as QuorumController.claim() does.
     * After a failover ({@code afterFailover}), the first offset this controller writes is
     * one past Raft's leader-change record, itself one past the last kept record.
     */
    ControllerContext(Settings settings, ManualTime time, int claimEpoch,
                      List<List<LoggedRecord>> batches, boolean afterFailover) {
        this.settings = settings;
        this.time = time;
        this.claimEpoch = claimEpoch;
        this.snapshotRegistry = KafkaCompat.newSnapshotRegistry();
        // As in QuorumController, feature changes are checked against what the registered
        // brokers and controllers support.
        ClusterFeatureSupportDescriber describer = new ClusterFeatureSupportDescriber() {
            @Override
            public Iterator<Map.Entry<Integer, Map<String, VersionRange>>> brokerSupported() {
                return clusterControl.brokerSupportedFeatures();
            }

            @Override
            public Iterator<Map.Entry<Integer, Map<String, VersionRange>>> controllerSupported() {
                return clusterControl.controllerSupportedFeatures();
            }
        };
        this.featureControl = new FeatureControlManager.Builder().
            setSnapshotRegistry(snapshotRegistry).
            setQuorumFeatures(new QuorumFeatures(0,
                QuorumFeatures.defaultSupportedFeatureMap(true),
                Collections.singletonList(0))).
            setClusterFeatureSupportDescriber(describer).
            build();
        // The bootstrap metadata: metadata.version and the ELR feature, replayed directly
        // (not logged), as ReplicationControlTestContext does.
        featureControl.replay(new FeatureLevelRecord().
            setName(MetadataVersion.FEATURE_NAME).
            setFeatureLevel(settings.metadataVersion.featureLevel()));
        featureControl.replay(new FeatureLevelRecord().
            setName(EligibleLeaderReplicasVersion.FEATURE_NAME).
            setFeatureLevel(settings.elr ?
                EligibleLeaderReplicasVersion.ELRV_1.featureLevel() :
                EligibleLeaderReplicasVersion.ELRV_0.featureLevel()));
        this.clusterControl = new ClusterControlManager.Builder().
            setClusterId(CLUSTER_ID).
            setTime(time).
            setSnapshotRegistry(snapshotRegistry).
            setSessionTimeoutNs(TimeUnit.MILLISECONDS.toNanos(settings.sessionTimeoutMs)).
            setReplicaPlacer(new StripedReplicaPlacer(new Random(0))).
            setFeatureControlManager(featureControl).
            setBrokerShutdownHandler(this::handleBrokerShutdown).
            build();
        this.configurationControl = new ConfigurationControlManager.Builder().
            setSnapshotRegistry(snapshotRegistry).
            setFeatureControl(featureControl).
            setStaticConfig(Collections.emptyMap()).
            setKafkaConfigSchema(HarnessConfigSchema.INSTANCE).
            build();
        this.replicationControl = new ReplicationControlManager.Builder().
            setSnapshotRegistry(snapshotRegistry).
            setMaxElectionsPerImbalance(ReplicationControlManager.MAX_ELECTIONS_PER_IMBALANCE).
            setConfigurationControl(configurationControl).
            setClusterControl(clusterControl).
            setCreateTopicPolicy(Optional.empty()).
            setFeatureControl(featureControl).
            build();

        long lastOffset = 0;
        for (List<LoggedRecord> batch : batches) {
            for (LoggedRecord record : batch) {
                replay(record.record.message(), record.offset);
                lastOffset = record.offset;
            }
            log.add(batch);
        }
        // A new leader's first write is Raft's leader-change record, which takes one offset.
        this.nextOffset = afterFailover ? lastOffset + 2 : lastOffset + 1;
        clusterControl.activate();
        for (BrokerRegistration registration : clusterControl.brokerRegistrations().values()) {
            trackedKeys.add(new BrokerIdAndEpoch(registration.id(), registration.epoch()));
        }
    }

    private void handleBrokerShutdown(int brokerId, boolean isCleanShutdown,
                                      List<ApiMessageAndVersion> records) {
        replicationControl.handleBrokerShutdown(brokerId, isCleanShutdown, records);
    }

    // ------------------------------------------------------------------ log and replay

    /** The offset of the last record written (0 when none). */
    long lastWrittenOffset() {
        return nextOffset - 1;
    }

    /**
     * Appends the records as one batch, replaying each at its offset, and returns the batch's
     * last offset; with no records, nothing is written and the last written offset is
     * returned (what QuorumController hands processBatchEndOffset in that case).
     */
    long write(List<ApiMessageAndVersion> records) {
        if (records.isEmpty()) {
            return lastWrittenOffset();
        }
        List<LoggedRecord> batch = new ArrayList<>(records.size());
        for (ApiMessageAndVersion record : records) {
            long offset = nextOffset++;
            replay(record.message(), offset);
            batch.add(new LoggedRecord(offset, record));
            written.add(record.message().toString());
        }
        log.add(batch);
        return batch.get(batch.size() - 1).offset;
    }

    /** Applies one record to the managers, dispatching as QuorumController.replay does. */
    void replay(ApiMessage message, long offset) {
        if (message instanceof RegisterBrokerRecord) {
            clusterControl.replay((RegisterBrokerRecord) message, offset);
        } else if (message instanceof UnregisterBrokerRecord) {
            clusterControl.replay((UnregisterBrokerRecord) message);
        } else if (message instanceof TopicRecord) {
            replicationControl.replay((TopicRecord) message);
        } else if (message instanceof PartitionRecord) {
            replicationControl.replay((PartitionRecord) message);
        } else if (message instanceof ConfigRecord) {
            configurationControl.replay((ConfigRecord) message);
        } else if (message instanceof PartitionChangeRecord) {
            replicationControl.replay((PartitionChangeRecord) message);
        } else if (message instanceof FenceBrokerRecord) {
            clusterControl.replay((FenceBrokerRecord) message);
        } else if (message instanceof UnfenceBrokerRecord) {
            clusterControl.replay((UnfenceBrokerRecord) message);
        } else if (message instanceof RemoveTopicRecord) {
            replicationControl.replay((RemoveTopicRecord) message);
        } else if (message instanceof FeatureLevelRecord) {
            featureControl.replay((FeatureLevelRecord) message);
        } else if (message instanceof BrokerRegistrationChangeRecord) {
            clusterControl.replay((BrokerRegistrationChangeRecord) message);
        } else if (message instanceof RegisterControllerRecord) {
            clusterControl.replay((RegisterControllerRecord) message);
        } else if (message instanceof ClearElrRecord) {
            replicationControl.replay((ClearElrRecord) message);
        } else if (message instanceof NoOpRecord) {
            // Nothing to apply, as in QuorumController.
        } else {
            throw new IllegalStateException("The harness does not replay " +
                message.getClass().getSimpleName() + " records");
        }
    }

    MetadataVersion metadataVersion() {
        return KafkaCompat.metadataVersion(featureControl);
    }

    // ------------------------------------------------------------------ sessions

    /**
     * The broker's heartbeat session times out and nobody else's: the clock jumps by the
     * session timeout plus 1 ms, and every other broker's tracker entry that was still valid
     * before the jump is refreshed to the new time.
     */
    void expire(int brokerId) {
        BrokerHeartbeatTracker tracker = clusterControl.heartbeatManager().tracker();
        long before = time.nanoseconds();
        List<BrokerIdAndEpoch> keep = new ArrayList<>();
        for (BrokerIdAndEpoch key : trackedKeys) {
            if (key.id() == brokerId) {
                continue;
            }
            OptionalLong contact = tracker.contactTime(key);
            if (contact.isPresent() && !tracker.isExpired(contact.getAsLong(), before)) {
                keep.add(key);
            }
        }
        time.advanceMs(settings.sessionTimeoutMs + 1);
        long after = time.nanoseconds();
        for (BrokerIdAndEpoch key : keep) {
            tracker.updateContactTime(key, after);
        }
    }

    // ------------------------------------------------------------------ handlers

    /** QuorumController.registerBroker. Returns the new broker epoch. */
    long register(int brokerId, Uuid incarnation, List<Uuid> logDirs, long previousBrokerEpoch) {
        // QuorumController builds the finalized features from the feature manager plus the
        // kraft.version its Raft client reports.
        Map<String, Short> controllerFeatures =
            new HashMap<>(featureControl.finalizedFeatures(Long.MAX_VALUE).featureMap());
        controllerFeatures.put(KRaftVersion.FEATURE_NAME, KRAFT_VERSION.featureLevel());

        BrokerRegistrationRequestData.FeatureCollection features =
            new BrokerRegistrationRequestData.FeatureCollection();
        features.add(new BrokerRegistrationRequestData.Feature().
            setName(MetadataVersion.FEATURE_NAME).
            setMinSupportedVersion(MetadataVersion.MINIMUM_VERSION.featureLevel()).
            setMaxSupportedVersion(MetadataVersion.latestTesting().featureLevel()));
        for (Map.Entry<String, Short> entry : new TreeMap<>(controllerFeatures).entrySet()) {
            if (entry.getKey().equals(MetadataVersion.FEATURE_NAME)) {
                continue;
            }
            short max = entry.getValue();
            try {
                max = (short) Math.max(max, Feature.featureFromName(entry.getKey()).latestTesting());
            } catch (IllegalArgumentException e) {
                // A feature this Kafka does not name: support exactly up to the finalized level.
            }
            features.add(new BrokerRegistrationRequestData.Feature().
                setName(entry.getKey()).
                setMinSupportedVersion((short) 0).
                setMaxSupportedVersion(max));
        }

        BrokerRegistrationRequestData.ListenerCollection listeners =
            new BrokerRegistrationRequestData.ListenerCollection();
        listeners.add(new BrokerRegistrationRequestData.Listener().
            setName("PLAINTEXT").
            setHost("localhost").
            setPort(9092 + brokerId).
            setSecurityProtocol(SecurityProtocol.PLAINTEXT.id));

        BrokerRegistrationRequestData request = new BrokerRegistrationRequestData().
            setBrokerId(brokerId).
            setClusterId(CLUSTER_ID).
            setIncarnationId(incarnation).
            setListeners(listeners).
            setFeatures(features).
            setRack(null).
            setIsMigratingZkBroker(false).
            setLogDirs(logDirs).
            setPreviousBrokerEpoch(previousBrokerEpoch);

        ControllerResult<BrokerRegistrationReply> result = clusterControl.registerBroker(
            request, nextOffset,
            new FinalizedControllerFeatures(controllerFeatures, Long.MAX_VALUE),
            true);
        write(result.records());
        return result.response().epoch();
    }

    /** QuorumController.processBrokerHeartbeat's tracking step; remembers the tracker key. */
    void trackHeartbeat(int brokerId, long brokerEpoch) {
        if (!clusterControl.trackBrokerHeartbeat(brokerId, brokerEpoch)) {
            throw new IllegalStateException("ClusterControlManager is not active");
        }
        trackedKeys.add(new BrokerIdAndEpoch(brokerId, brokerEpoch));
    }

    BrokerHeartbeatRequestData heartbeatRequest(int brokerId, long brokerEpoch, boolean wantFence,
                                                boolean wantShutdown, List<Uuid> offlineLogDirs) {
        return new BrokerHeartbeatRequestData().
            setBrokerId(brokerId).
            setBrokerEpoch(brokerEpoch).
            setCurrentMetadataOffset(lastWrittenOffset()).
            setWantFence(wantFence).
            setWantShutDown(wantShutdown).
            setOfflineLogDirs(offlineLogDirs);
    }

    /** The write event of QuorumController.processBrokerHeartbeat (after tracking). */
    BrokerHeartbeatReply heartbeat(BrokerHeartbeatRequestData request) {
        int brokerId = request.brokerId();
        OptionalLong registrationOffset = clusterControl.registerBrokerRecordOffset(brokerId);
        if (registrationOffset.isEmpty()) {
            throw new StaleBrokerEpochException(
                String.format("Receive a heartbeat from broker %d before registration", brokerId));
        }
        ControllerResult<BrokerHeartbeatReply> result =
            replicationControl.processBrokerHeartbeat(request, registrationOffset.getAsLong());
        long batchEndOffset = write(result.records());
        // QuorumController's processBatchEndOffset for the heartbeat event.
        if (result.response().inControlledShutdown()) {
            clusterControl.heartbeatManager().
                maybeUpdateControlledShutdownOffset(brokerId, batchEndOffset);
        }
        return result.response();
    }

    /** What QuorumController does when a heartbeat's event timed out in the queue. */
    void expiredHeartbeat(BrokerHeartbeatRequestData request) {
        replicationControl.processExpiredBrokerHeartbeat(request);
    }

    /** Runs maybeFenceOneStaleBroker as the periodic task would; true if it fenced someone. */
    boolean fenceStaleBrokers(int maxRuns) {
        for (int i = 0; i < maxRuns; i++) {
            ControllerResult<Boolean> result = replicationControl.maybeFenceOneStaleBroker();
            write(result.records());
            if (!result.records().isEmpty()) {
                return true;
            }
            if (!result.response()) {
                return false;
            }
        }
        return false;
    }

    /** Runs maybeElectUncleanLeaders as the periodic task would. */
    void electUncleanLeaders(int maxRuns) {
        for (int i = 0; i < maxRuns; i++) {
            ControllerResult<Boolean> result = replicationControl.maybeElectUncleanLeaders();
            write(result.records());
            if (!result.response()) {
                return;
            }
        }
    }

    /** QuorumController.assignReplicasToDirs for one partition. Returns {error, partitionError}. */
    Errors[] assign(int brokerId, long brokerEpoch, int partition, Uuid dir) {
        Uuid topicId = topicIdOrUnknown(partition);
        AssignReplicasToDirsRequestData request = new AssignReplicasToDirsRequestData().
            setBrokerId(brokerId).
            setBrokerEpoch(brokerEpoch).
            setDirectories(List.of(new AssignReplicasToDirsRequestData.DirectoryData().
                setId(dir).
                setTopics(List.of(new AssignReplicasToDirsRequestData.TopicData().
                    setTopicId(topicId).
                    setPartitions(List.of(new AssignReplicasToDirsRequestData.PartitionData().
                        setPartitionIndex(0)))))));
        ControllerResult<AssignReplicasToDirsResponseData> result =
            replicationControl.handleAssignReplicasToDirs(request);
        write(result.records());
        AssignReplicasToDirsResponseData response = result.response();
        Errors partitionError = Errors.NONE;
        if (!response.directories().isEmpty()
                && !response.directories().get(0).topics().isEmpty()
                && !response.directories().get(0).topics().get(0).partitions().isEmpty()) {
            partitionError = Errors.forCode(response.directories().get(0).topics().get(0).
                partitions().get(0).errorCode());
        }
        return new Errors[] {Errors.forCode(response.errorCode()), partitionError};
    }

    /** QuorumController.alterPartition for one partition. Returns {error, partitionError}. */
    Errors[] alterPartition(int brokerId, long brokerEpoch, int partition, int leaderEpoch,
                            int partitionEpoch, List<AlterPartitionRequestData.BrokerState> isr,
                            byte leaderRecoveryState) {
        short version = ApiKeys.ALTER_PARTITION.latestVersion();
        ControllerRequestContext context = requestContext(ApiKeys.ALTER_PARTITION, version);
        AlterPartitionRequestData request = new AlterPartitionRequestData().
            setBrokerId(brokerId).
            setBrokerEpoch(brokerEpoch);
        request.topics().add(new AlterPartitionRequestData.TopicData().
            setTopicId(topicIdOrUnknown(partition)).
            setPartitions(List.of(new AlterPartitionRequestData.PartitionData().
                setPartitionIndex(0).
                setLeaderEpoch(leaderEpoch).
                setPartitionEpoch(partitionEpoch).
                setNewIsrWithEpochs(isr).
                setLeaderRecoveryState(leaderRecoveryState))));
        ControllerResult<AlterPartitionResponseData> result =
            replicationControl.alterPartition(context, request);
        write(result.records());
        AlterPartitionResponseData response = result.response();
        Errors partitionError = Errors.NONE;
        if (!response.topics().isEmpty() && !response.topics().get(0).partitions().isEmpty()) {
            partitionError = Errors.forCode(response.topics().get(0).partitions().get(0).errorCode());
        }
        return new Errors[] {Errors.forCode(response.errorCode()), partitionError};
    }

    /** QuorumController.createTopics: topic p&lt;p&gt; with one manually assigned partition. */
    Errors createPartition(int partition, List<Integer> replicas) {
        String name = topicName(partition);
        CreateTopicsRequestData.CreatableTopic topic = new CreateTopicsRequestData.CreatableTopic().
            setName(name).
            setNumPartitions(-1).
            setReplicationFactor((short) -1);
        topic.assignments().add(new CreateTopicsRequestData.CreatableReplicaAssignment().
            setPartitionIndex(0).
            setBrokerIds(new ArrayList<>(replicas)));
        topic.configs().add(new CreateTopicsRequestData.CreatableTopicConfig().
            setName(HarnessConfigSchema.MIN_INSYNC_REPLICAS).
            setValue(topicConfig(HarnessConfigSchema.MIN_INSYNC_REPLICAS)));
        topic.configs().add(new CreateTopicsRequestData.CreatableTopicConfig().
            setName(HarnessConfigSchema.UNCLEAN_LEADER_ELECTION_ENABLE).
            setValue(topicConfig(HarnessConfigSchema.UNCLEAN_LEADER_ELECTION_ENABLE)));
        CreateTopicsRequestData request = new CreateTopicsRequestData();
        request.topics().add(topic);
        ControllerRequestContext context =
            requestContext(ApiKeys.CREATE_TOPICS, ApiKeys.CREATE_TOPICS.latestVersion());
        ControllerResult<CreateTopicsResponseData> result = KafkaCompat.createTopics(
            replicationControl, context, request, Collections.singleton(name));
        write(result.records());
        CreateTopicsResponseData.CreatableTopicResult topicResult =
            result.response().topics().find(name);
        return topicResult == null ? Errors.UNKNOWN_SERVER_ERROR : Errors.forCode(topicResult.errorCode());
    }

    /**
     * QuorumController.deleteTopics for topic p&lt;p&gt;: the ID as ControllerApis finds it
     * (findTopicIds, at the last committed offset: here everything is committed), then
     * ReplicationControlManager.deleteTopics, its RemoveTopicRecord written and replayed.
     * A topic not there: UNKNOWN_TOPIC_OR_PARTITION, as findTopicIds answers.
     */
    Errors deleteTopic(int partition) {
        Uuid id = replicationControl.getTopicId(topicName(partition));
        if (id == null) {
            return Errors.UNKNOWN_TOPIC_OR_PARTITION;
        }
        ControllerRequestContext context =
            requestContext(ApiKeys.DELETE_TOPICS, ApiKeys.DELETE_TOPICS.latestVersion());
        ControllerResult<Map<Uuid, ApiError>> result =
            replicationControl.deleteTopics(context, Collections.singleton(id));
        write(result.records());
        return result.response().get(id).error();
    }

    /**
     * QuorumController.alterPartitionReassignments for partition 0 of topic p&lt;p&gt;: the target
     * replicas, or null to cancel the reassignment under way
     * (ReplicationControlManager.alterPartitionReassignments). Returns {error, partitionError}.
     */
    Errors[] alterPartitionReassignment(int partition, List<Integer> replicas) {
        AlterPartitionReassignmentsRequestData request = new AlterPartitionReassignmentsRequestData().
            setTimeoutMs(60_000);
        request.topics().add(new AlterPartitionReassignmentsRequestData.ReassignableTopic().
            setName(topicName(partition)).
            setPartitions(List.of(new AlterPartitionReassignmentsRequestData.ReassignablePartition().
                setPartitionIndex(0).
                setReplicas(replicas))));
        ControllerResult<AlterPartitionReassignmentsResponseData> result =
            replicationControl.alterPartitionReassignments(request);
        write(result.records());
        AlterPartitionReassignmentsResponseData response = result.response();
        Errors partitionError = Errors.NONE;
        if (!response.responses().isEmpty() && !response.responses().get(0).partitions().isEmpty()) {
            partitionError = Errors.forCode(response.responses().get(0).partitions().get(0).errorCode());
        }
        return new Errors[] {Errors.forCode(response.errorCode()), partitionError};
    }

    /**
     * QuorumController.incrementalAlterConfigs: SET key=value on every topic p&lt;p&gt; there is,
     * in one request (the model's topic config stands for them all); a topic created later
     * is created with it. Returns the first resource's error, or NONE.
     */
    Errors alterTopicConfig(String key, String value) {
        Map<ConfigResource, Map<String, Map.Entry<AlterConfigOp.OpType, String>>> changes = new LinkedHashMap<>();
        for (String name : harnessTopics().values()) {
            changes.put(new ConfigResource(ConfigResource.Type.TOPIC, name),
                Map.of(key, new java.util.AbstractMap.SimpleImmutableEntry<>(AlterConfigOp.OpType.SET, value)));
        }
        ControllerResult<Map<ConfigResource, ApiError>> result =
            KafkaCompat.incrementalAlterConfigs(configurationControl, changes);
        write(result.records());
        for (ApiError error : result.response().values()) {
            if (error.isFailure()) {
                return error.error();
            }
        }
        return Errors.NONE;
    }

    /**
     * A topic config as the topics there are hold it (all alike: they are altered together),
     * or as the settings give it before there is one; a new topic is created with it.
     */
    String topicConfig(String key) {
        for (String name : harnessTopics().values()) {
            String value = configurationControl.currentTopicConfig(name).get(key);
            if (value != null) {
                return value;
            }
        }
        return key.equals(HarnessConfigSchema.MIN_INSYNC_REPLICAS)
            ? Integer.toString(settings.minIsr) : Boolean.toString(settings.uncleanElection);
    }

    /** The topics p&lt;p&gt; the harness made, by p. */
    TreeMap<Integer, String> harnessTopics() {
        TreeMap<Integer, String> topics = new TreeMap<>();
        for (String name : replicationControl.findAllTopicIds(Long.MAX_VALUE).keySet()) {
            if (name.matches("p(0|[1-9][0-9]{0,8})")) {
                topics.put(Integer.parseInt(name.substring(1)), name);
            }
        }
        return topics;
    }

    /** QuorumController.electLeaders for partition 0 of topic p&lt;p&gt;. Returns {error, partitionError}. */
    Errors[] electLeaders(int partition, ElectionType electionType) {
        ElectLeadersRequestData.TopicPartitionsCollection topics =
            new ElectLeadersRequestData.TopicPartitionsCollection();
        topics.add(new ElectLeadersRequestData.TopicPartitions().
            setTopic(topicName(partition)).
            setPartitions(List.of(0)));
        ElectLeadersRequestData request = new ElectLeadersRequestData().
            setElectionType(electionType.value).
            setTopicPartitions(topics).
            setTimeoutMs(60_000);
        ControllerResult<ElectLeadersResponseData> result = replicationControl.electLeaders(request);
        write(result.records());
        ElectLeadersResponseData response = result.response();
        Errors partitionError = Errors.NONE;
        if (!response.replicaElectionResults().isEmpty()
                && !response.replicaElectionResults().get(0).partitionResult().isEmpty()) {
            partitionError = Errors.forCode(
                response.replicaElectionResults().get(0).partitionResult().get(0).errorCode());
        }
        return new Errors[] {Errors.forCode(response.errorCode()), partitionError};
    }

    /** QuorumController.updateFeatures raising metadata.version (upgrade type UPGRADE). */
    Errors upgradeMetadataVersion(MetadataVersion target) {
        Map<String, Short> updates = new HashMap<>();
        Map<String, FeatureUpdate.UpgradeType> upgradeTypes = new HashMap<>();
        updates.put(MetadataVersion.FEATURE_NAME, target.featureLevel());
        upgradeTypes.put(MetadataVersion.FEATURE_NAME, FeatureUpdate.UpgradeType.UPGRADE);
        ControllerResult<ApiError> result = KafkaCompat.updateFeatures(
            configurationControl, updates, upgradeTypes, false, claimEpoch);
        write(result.records());
        return result.response().error();
    }

    // ------------------------------------------------------------------ helpers

    Uuid topicIdOrUnknown(int partition) {
        Uuid id = replicationControl.getTopicId(topicName(partition));
        return id == null ? unknownTopicId(partition) : id;
    }

    /** As ControllerRequestContextUtil.anonymousContextFor in Kafka's tests. */
    static ControllerRequestContext requestContext(ApiKeys api, short version) {
        return new ControllerRequestContext(
            new RequestHeaderData().
                setRequestApiKey(api.id).
                setRequestApiVersion(version),
            KafkaPrincipal.ANONYMOUS,
            OptionalLong.empty(),
            quota -> { });
    }

    // ------------------------------------------------------------------ state

    Map<String, Object> state() {
        Map<String, Object> state = new LinkedHashMap<>();
        state.put("metadataVersion", metadataVersion().version());

        Map<String, Object> brokers = new LinkedHashMap<>();
        for (BrokerRegistration registration :
                new TreeMap<>(clusterControl.brokerRegistrations()).values()) {
            Map<String, Object> broker = new LinkedHashMap<>();
            broker.put("epoch", registration.epoch());
            broker.put("incarnation", uuid(registration.incarnationId()));
            broker.put("fenced", registration.fenced());
            broker.put("inControlledShutdown", registration.inControlledShutdown());
            broker.put("logDirs", uuids(registration.directories()));
            if (KafkaCompat.hasCordonedDirectories()) {
                List<Uuid> cordoned = KafkaCompat.cordonedDirectories(registration);
                broker.put("cordonedLogDirs", cordoned == null ? null : uuids(cordoned));
            }
            brokers.put(Integer.toString(registration.id()), broker);
        }
        state.put("brokers", brokers);

        TreeMap<Integer, Uuid> topics = new TreeMap<>();
        for (Map.Entry<String, Uuid> entry :
                replicationControl.findAllTopicIds(Long.MAX_VALUE).entrySet()) {
            String name = entry.getKey();
            if (name.matches("p(0|[1-9][0-9]{0,8})")) {
                topics.put(Integer.parseInt(name.substring(1)), entry.getValue());
            }
        }
        Map<String, Object> partitions = new LinkedHashMap<>();
        for (Map.Entry<Integer, Uuid> entry : topics.entrySet()) {
            PartitionRegistration registration = replicationControl.getPartition(entry.getValue(), 0);
            if (registration == null) {
                continue;
            }
            Map<String, Object> partition = new LinkedHashMap<>();
            partition.put("replicas", registration.replicas);
            partition.put("removingReplicas", registration.removingReplicas);
            partition.put("addingReplicas", registration.addingReplicas);
            partition.put("leader", registration.leader);
            partition.put("isr", registration.isr);
            partition.put("elr", registration.elr == null ? new int[0] : registration.elr);
            partition.put("lastKnownElr",
                registration.lastKnownElr == null ? new int[0] : registration.lastKnownElr);
            partition.put("leaderEpoch", registration.leaderEpoch);
            partition.put("partitionEpoch", registration.partitionEpoch);
            List<Object> directories = new ArrayList<>();
            if (registration.directories != null) {
                for (Uuid dir : registration.directories) {
                    directories.add(uuid(dir));
                }
            }
            partition.put("directories", directories);
            partition.put("leaderRecoveryState", registration.leaderRecoveryState.value());
            Map<String, String> configs = configurationControl.currentTopicConfig("p" + entry.getKey());
            partition.put("minIsr", configs.get(HarnessConfigSchema.MIN_INSYNC_REPLICAS));
            partition.put("uncleanElection", configs.get(HarnessConfigSchema.UNCLEAN_LEADER_ELECTION_ENABLE));
            partitions.put(Integer.toString(entry.getKey()), partition);
        }
        state.put("partitions", partitions);
        return state;
    }

    static List<Long> uuid(Uuid id) {
        return List.of(id.getMostSignificantBits(), id.getLeastSignificantBits());
    }

    static List<Object> uuids(List<Uuid> ids) {
        List<Object> out = new ArrayList<>(ids.size());
        for (Uuid id : ids) {
            out.add(uuid(id));
        }
        return out;
    }
}
