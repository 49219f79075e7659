#!/usr/bin/env bash
# Builds the harness against each given Kafka release (default: 4.0.0 and 4.4.0), feeds it
# harness/smoke.jsonl and checks the answers. Needs java/javac 17+, mvn and python3.
#
#   harness/smoke.sh                 # 4.0.0 and 4.4.0 from Maven Central
#   harness/smoke.sh 4.0.0           # one release
#   KAFKA_CLASSPATH=/path/a.jar:/path/b.jar harness/smoke.sh   # your own Kafka jars
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

run_one() {
    local label="$1" classpath="$2"
    local classes="$work/classes-$label"
    mkdir -p "$classes"
    javac --release 17 -d "$classes" -cp "$classpath" \
        "$here"/src/main/java/org/apache/kafka/controller/*.java
    java -cp "$classes:$classpath" org.apache.kafka.controller.ConformanceHarness \
        < "$here/smoke.jsonl" > "$work/out-$label.jsonl" 2> "$work/err-$label.txt"
    python3 - "$here/smoke.jsonl" "$work/out-$label.jsonl" "$label" <<'PY'
import json, sys

requests = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
lines = open(sys.argv[2]).read().splitlines()
label = sys.argv[3]
ready = json.loads(lines[0])
assert ready.get("ready") is True, ready
responses = [json.loads(line) for line in lines[1:]]
assert len(responses) == len(requests), (len(responses), len(requests))

failures = []

def check(step, cond, what):
    if not cond:
        failures.append(f"step {step} ({requests[step - 1]['op']}): {what}: "
                        f"{json.dumps({k: v for k, v in responses[step - 1].items() if k != 'state'})}")

def r(step):
    return responses[step - 1]

def p0(step):
    return r(step)["state"]["partitions"].get("0", {})

def b0(step):
    return r(step)["state"]["brokers"].get("0", {})

for step, resp in enumerate(responses, 1):
    check(step, resp.get("ok") is True, "not ok")
check(2, r(2).get("brokerEpoch") == 1 and b0(2)["fenced"], "registration")
check(3, r(3).get("isFenced") is False and not b0(3)["fenced"], "heartbeat unfences")
check(4, r(4)["error"] == "NONE" and p0(4)["leader"] == 0, "partition created with leader 0")
check(5, r(5)["partitionError"] == "NONE" and p0(5)["directories"] == [[1, 1]], "assigned to dir [1,1]")
check(6, p0(6)["leader"] == -1 and b0(6)["logDirs"] == [[1, 2]], "offline dir: leaderless, dir dropped")
check(7, r(7).get("fenced") is True and b0(7)["fenced"], "session expiry fences")
check(8, r(8)["batches"] == 5 and not b0(8)["fenced"], "failover drops the fence batch")
check(9, r(9).get("fenced") is True, "new controller fences on expiry")
check(11, r(11)["error"] == "STALE_BROKER_EPOCH", "stale epoch heartbeat")
check(12, r(12)["error"] == "NONE" and r(12).get("brokerEpoch") == 1, "same incarnation keeps epoch")
check(13, r(13)["error"] == "INVALID_REGISTRATION", "reserved directory")
check(14, r(14)["error"] == "REQUEST_TIMED_OUT", "timed-out heartbeat")
check(15, r(15)["partitionError"] == "PREFERRED_LEADER_NOT_AVAILABLE", "preferred election, no leader")
check(16, r(16)["partitionError"] == "UNKNOWN_TOPIC_OR_PARTITION", "election on unknown topic")
check(17, r(17)["partitionError"] == "UNKNOWN_TOPIC_ID", "alterPartition on unknown topic")
check(18, r(18)["error"] == "STALE_BROKER_EPOCH", "alterPartition with stale epoch")
check(19, r(19)["partitionError"] == "UNKNOWN_TOPIC_ID", "assign on unknown topic")
check(20, r(20)["error"] == "TOPIC_ALREADY_EXISTS", "duplicate topic")
check(22, r(22)["error"] == "NONE" and r(22)["state"]["metadataVersion"] == "3.8-IV0", "metadata.version upgrade")
check(24, r(24).get("brokerEpoch") == 15, "new incarnation after session expiry gets a new epoch")

# Differs by release: 4.0.0's ClusterControlManager.activate() gives every registered
# broker a fresh session, 4.4.0's only the unfenced ones; broker 0 is fenced here.
last = responses[-1]
print(f"{label}: re-registration with a new incarnation right after failover -> {last['error']}")

if failures:
    print(f"{label}: FAILED")
    for failure in failures:
        print("  " + failure)
    sys.exit(1)
print(f"{label} ({ready['kafkaVersion']}): {len(responses)} passed, 0 failed")
PY
}

if [[ -n "${KAFKA_CLASSPATH:-}" ]]; then
    run_one custom "$KAFKA_CLASSPATH"
    exit 0
fi

versions=("$@")
if [[ ${#versions[@]} -eq 0 ]]; then
    versions=(4.0.0 4.4.0)
fi
for version in "${versions[@]}"; do
    mvn -q -f "$here/pom.xml" -Dkafka.version="$version" dependency:build-classpath \
        -Dmdep.outputFile="$work/cp-$version.txt" > "$work/mvn-$version.log" 2>&1 \
        || { cat "$work/mvn-$version.log"; exit 1; }
    run_one "$version" "$(cat "$work/cp-$version.txt")"
done
