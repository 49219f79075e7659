/*
 * Part of kraftcheck's conformance harness. Licensed under the Apache License, Version 2.0.
 */
package org.apache.kafka.controller;

import org.apache.kafka.clients.admin.AlterConfigOp;
import org.apache.kafka.clients.admin.FeatureUpdate;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.Uuid;
import org.apache.kafka.common.message.BrokerHeartbeatRequestData;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.requests.ApiError;
import org.apache.kafka.metadata.BrokerRegistration;
import org.apache.kafka.server.common.MetadataVersion;
import org.apache.kafka.timeline.SnapshotRegistry;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The one place where the harness bridges API differences between the Kafka releases it
 * runs against (checked: 4.0.0 and 4.4.0). Everything else in the harness calls Kafka
 * directly; every difference below is named where it is handled, and each is resolved by
 * looking the member up by name and parameter count, so the same source compiles and
 * runs against either release (and, it is hoped, the releases between them).
 */
final class KafkaCompat {
    private KafkaCompat() { }

    /**
     * The running Kafka's version string.
     * Difference: AppInfoParser is org.apache.kafka.common.utils.AppInfoParser in 4.0.0 and
     * org.apache.kafka.common.utils.internals.AppInfoParser in 4.4.0.
     */
    static String kafkaVersion() {
        for (String name : new String[] {
            "org.apache.kafka.common.utils.AppInfoParser",
            "org.apache.kafka.common.utils.internals.AppInfoParser"}) {
            try {
                Class<?> parser = Class.forName(name);
                return (String) parser.getMethod("getVersion").invoke(null);
            } catch (ClassNotFoundException e) {
                // try the next location
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException("cannot read Kafka's version from " + name, e);
            }
        }
        return "unknown";
    }

    /**
     * A new SnapshotRegistry with a fresh LogContext.
     * Difference: SnapshotRegistry's constructor takes org.apache.kafka.common.utils.LogContext
     * in 4.0.0 and org.apache.kafka.common.utils.internals.LogContext in 4.4.0.
     */
    static SnapshotRegistry newSnapshotRegistry() {
        for (Constructor<?> constructor : SnapshotRegistry.class.getConstructors()) {
            Class<?>[] params = constructor.getParameterTypes();
            if (params.length == 1 && params[0].getSimpleName().equals("LogContext")) {
                try {
                    Object logContext = params[0].getConstructor().newInstance();
                    return (SnapshotRegistry) constructor.newInstance(logContext);
                } catch (InvocationTargetException e) {
                    throw rethrow(e.getCause());
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException("cannot build a SnapshotRegistry", e);
                }
            }
        }
        throw new IllegalStateException("no SnapshotRegistry(LogContext) constructor found");
    }

    /**
     * MetadataVersion.fromVersionString, allowing versions that are not production-ready.
     * Difference: fromVersionString(String) in 4.0.0; fromVersionString(String, boolean
     * unstableVersionsEnabled) in 4.4.0.
     */
    static MetadataVersion metadataVersionFromString(String version) {
        Method method = find(MetadataVersion.class, "fromVersionString", 1, 2);
        if (method.getParameterCount() == 1) {
            return (MetadataVersion) invoke(method, null, version);
        }
        return (MetadataVersion) invoke(method, null, version, true);
    }

    /**
     * The current metadata.version.
     * Difference: FeatureControlManager.metadataVersion() returns MetadataVersion in 4.0.0;
     * in 4.4.0 it returns Optional&lt;MetadataVersion&gt; and metadataVersionOrThrow()
     * returns the version.
     */
    static MetadataVersion metadataVersion(FeatureControlManager featureControl) {
        Method method = findOptional(FeatureControlManager.class, "metadataVersionOrThrow", 0);
        if (method == null) {
            method = find(FeatureControlManager.class, "metadataVersion", 0, 0);
        }
        return (MetadataVersion) invoke(method, featureControl);
    }

    /**
     * ReplicationControlManager.createTopics.
     * Difference: (context, request, describable) in 4.0.0; 4.4.0 adds a fourth boolean
     * that is passed on to ConfigurationControlManager.incrementalAlterConfig and only
     * relaxes the validation of the broker config cordoned.log.dirs; the harness passes
     * false, which leaves topic configs untouched.
     */
    @SuppressWarnings("unchecked")
    static ControllerResult<CreateTopicsResponseData> createTopics(
        ReplicationControlManager replicationControl,
        ControllerRequestContext context,
        CreateTopicsRequestData request,
        Set<String> describable
    ) {
        Method method = find(ReplicationControlManager.class, "createTopics", 3, 4);
        if (method.getParameterCount() == 3) {
            return (ControllerResult<CreateTopicsResponseData>)
                invoke(method, replicationControl, context, request, describable);
        }
        return (ControllerResult<CreateTopicsResponseData>)
            invoke(method, replicationControl, context, request, describable, false);
    }

    /**
     * ConfigurationControlManager.incrementalAlterConfigs, the call
     * QuorumController.incrementalAlterConfigs makes (newlyCreatedResource false).
     * Difference: (changes, newlyCreatedResource) in 4.0.0; 4.4.0 adds a third boolean that
     * only relaxes the validation of the broker config cordoned.log.dirs (as createTopics'
     * fourth); the harness passes false, which leaves topic configs untouched.
     */
    @SuppressWarnings("unchecked")
    static ControllerResult<Map<ConfigResource, ApiError>> incrementalAlterConfigs(
        ConfigurationControlManager configurationControl,
        Map<ConfigResource, Map<String, Map.Entry<AlterConfigOp.OpType, String>>> changes
    ) {
        Method method = find(ConfigurationControlManager.class, "incrementalAlterConfigs", 2, 3);
        if (method.getParameterCount() == 2) {
            return (ControllerResult<Map<ConfigResource, ApiError>>)
                invoke(method, configurationControl, changes, false);
        }
        return (ControllerResult<Map<ConfigResource, ApiError>>)
            invoke(method, configurationControl, changes, false, false);
    }

    /**
     * ConfigurationControlManager.updateFeatures, the call QuorumController.updateFeatures makes.
     * Difference: (updates, upgradeTypes, validateOnly) in 4.0.0; 4.4.0 adds the active
     * controller's claim epoch as a fourth argument (QuorumController passes curClaimEpoch).
     */
    @SuppressWarnings("unchecked")
    static ControllerResult<ApiError> updateFeatures(
        ConfigurationControlManager configurationControl,
        Map<String, Short> updates,
        Map<String, FeatureUpdate.UpgradeType> upgradeTypes,
        boolean validateOnly,
        int claimEpoch
    ) {
        Method method = find(ConfigurationControlManager.class, "updateFeatures", 3, 4);
        if (method.getParameterCount() == 3) {
            return (ControllerResult<ApiError>)
                invoke(method, configurationControl, updates, upgradeTypes, validateOnly);
        }
        return (ControllerResult<ApiError>)
            invoke(method, configurationControl, updates, upgradeTypes, validateOnly, claimEpoch);
    }

    /** One record of a log segment: its offset and its value. */
    static final class LogRecord {
        final long offset;
        final ByteBuffer value;
        final int valueSize;

        LogRecord(long offset, ByteBuffer value, int valueSize) {
            this.offset = offset;
            this.value = value;
            this.valueSize = valueSize;
        }
    }

    /** One batch of a log segment. */
    static final class LogBatch {
        final boolean control;
        final long baseOffset;
        final long lastOffset;
        final List<LogRecord> records = new ArrayList<>();

        LogBatch(boolean control, long baseOffset, long lastOffset) {
            this.control = control;
            this.baseOffset = baseOffset;
            this.lastOffset = lastOffset;
        }
    }

    /**
     * The complete batches of a log segment's bytes (a batch cut off at the end is left out).
     * Difference: MemoryRecords, RecordBatch and Record are in org.apache.kafka.common.record
     * in 4.0.0 and in org.apache.kafka.common.record.internal in 4.4.0; their methods are
     * called through the interfaces, which are public in both.
     */
    /**
     * Difference: BrokerHeartbeatRequestData.setCordonedLogDirs exists from 4.3.0 (KIP-1066);
     * an older Kafka's heartbeats cannot carry cordoned directories.
     */
    static void setCordonedLogDirs(BrokerHeartbeatRequestData heartbeat, List<Uuid> dirs) {
        Method method = findOptional(BrokerHeartbeatRequestData.class, "setCordonedLogDirs", 1);
        if (method == null) {
            throw new ConformanceHarness.BadRequest("this Kafka's heartbeats carry no cordoned log directories "
                + "(KIP-1066 came with Kafka 4.3.0)");
        }
        invoke(method, heartbeat, dirs);
    }

    /** Do this Kafka's broker registrations hold cordoned directories (KIP-1066, 4.3.0)? */
    static boolean hasCordonedDirectories() {
        return findOptional(BrokerRegistration.class, "cordonedDirectories", 0) != null;
    }

    /**
     * Difference: BrokerRegistration.cordonedDirectories exists from 4.3.0 (see
     * hasCordonedDirectories).  Null while no heartbeat of the registered incarnation has
     * reported any.
     */
    @SuppressWarnings("unchecked")
    static List<Uuid> cordonedDirectories(BrokerRegistration registration) {
        return (List<Uuid>) invoke(find(BrokerRegistration.class, "cordonedDirectories", 0, 0), registration);
    }

    static List<LogBatch> readBatches(ByteBuffer bytes) {
        String pkg = classIn("org.apache.kafka.common.record.MemoryRecords") ?
            "org.apache.kafka.common.record." : "org.apache.kafka.common.record.internal.";
        try {
            Class<?> memoryRecords = Class.forName(pkg + "MemoryRecords");
            Class<?> recordBatch = Class.forName(pkg + "RecordBatch");
            Class<?> record = Class.forName(pkg + "Record");
            Object records = memoryRecords.getMethod("readableRecords", ByteBuffer.class).invoke(null, bytes);
            Method isControl = recordBatch.getMethod("isControlBatch");
            Method baseOffset = recordBatch.getMethod("baseOffset");
            Method lastOffset = recordBatch.getMethod("lastOffset");
            Method offset = record.getMethod("offset");
            Method value = record.getMethod("value");
            Method valueSize = record.getMethod("valueSize");
            List<LogBatch> out = new ArrayList<>();
            for (Object batch : (Iterable<?>) memoryRecords.getMethod("batches").invoke(records)) {
                LogBatch read = new LogBatch((Boolean) isControl.invoke(batch),
                    (Long) baseOffset.invoke(batch), (Long) lastOffset.invoke(batch));
                if (!read.control) {
                    for (Object r : (Iterable<?>) batch) {
                        read.records.add(new LogRecord((Long) offset.invoke(r),
                            (ByteBuffer) value.invoke(r), (Integer) valueSize.invoke(r)));
                    }
                }
                out.add(read);
            }
            return out;
        } catch (InvocationTargetException e) {
            throw rethrow(e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot read log batches with this Kafka's record classes", e);
        }
    }

    private static boolean classIn(String name) {
        try {
            Class.forName(name);
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    // ------------------------------------------------------------------ helpers

    private static Method find(Class<?> type, String name, int minParams, int maxParams) {
        for (Method method : type.getDeclaredMethods()) {
            if (method.getName().equals(name) && !method.isSynthetic()
                    && method.getParameterCount() >= minParams
                    && method.getParameterCount() <= maxParams) {
                method.setAccessible(true);
                return method;
            }
        }
        throw new IllegalStateException("no method " + type.getSimpleName() + "." + name +
            " with " + minParams + ".." + maxParams + " parameters in this Kafka");
    }

    private static Method findOptional(Class<?> type, String name, int params) {
        for (Method method : type.getDeclaredMethods()) {
            if (method.getName().equals(name) && !method.isSynthetic()
                    && method.getParameterCount() == params) {
                method.setAccessible(true);
                return method;
            }
        }
        return null;
    }

    private static Object invoke(Method method, Object target, Object... args) {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw rethrow(e.getCause());
        } catch (IllegalAccessException e) {
            throw new IllegalStateException("cannot call " + method, e);
        }
    }

    /** Rethrows what a reflected Kafka call threw, unchanged, so error mapping sees it. */
    static RuntimeException rethrow(Throwable t) {
        KafkaCompat.<RuntimeException>sneakyThrow(t);
        return new IllegalStateException("unreachable");
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> void sneakyThrow(Throwable t) throws E {
        throw (E) t;
    }
}
