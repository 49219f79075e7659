"""The cluster client (``harness/.../ClusterClient.java``) as a process: Kafka's Admin, producer
and consumer against the brokers, and the controller's metadata log replayed into Kafka's own
controller managers.  Requests and answers are plain dicts (harness/README.md, "The cluster
client"); nothing here knows the model."""

from __future__ import annotations

from pathlib import Path

from kraftcheck.conform.harness import DEFAULT_KAFKA_VERSION, Harness

MAIN_CLASS = "org.apache.kafka.controller.ClusterClient"
#: A request may wait on Kafka's clients this long, in seconds (a consume reads a whole log).
REQUEST_TIMEOUT_S = 120


class ClusterClient:
    def __init__(self, bootstrap: str, kafka_version: str = DEFAULT_KAFKA_VERSION, kafka_classpath: str | None = None):
        self.process = Harness(kafka_version, kafka_classpath, main_class=MAIN_CLASS)
        self.process.request({"op": "connect", "bootstrap": bootstrap})

    def request(self, message: dict) -> dict:
        return self.process.request(message, timeout=REQUEST_TIMEOUT_S)

    def controller_state(self, metadata_log_dir: Path, batches: bool = False) -> dict:
        """Brokers and partitions as the controller's metadata log leaves them (the harness's
        ``state`` shape: registrations, and each ``p<N>`` topic's partition 0); with
        ``batches``, the log itself too, batch by batch."""
        return self.request({"op": "metadata", "logDir": str(metadata_log_dir), "batches": batches})

    def create_topic(self, topic: str, replicas: list[int], configs: dict[str, str]) -> None:
        self.request({"op": "createTopic", "topic": topic, "replicas": replicas, "configs": configs})

    def log_dirs(self, brokers: list[int]) -> dict:
        return self.request({"op": "logDirs", "brokers": brokers})["brokers"]

    def alter_replica_log_dir(self, topic: str, broker: int, path: str) -> str | None:
        return self.request({"op": "alterReplicaLogDir", "topic": topic, "partition": 0, "broker": broker,
                             "path": path})["error"]

    def elect_unclean(self, topic: str) -> str | None:
        return self.request({"op": "electLeaders", "topic": topic, "partition": 0, "type": "unclean"})["error"]

    def alter_broker_config(self, broker: int, name: str, value: str) -> None:
        self.request({"op": "alterBrokerConfig", "broker": broker, "name": name, "value": value})

    def broker_config(self, broker: int, name: str) -> str | None:
        return self.request({"op": "brokerConfig", "broker": broker, "name": name})["value"]

    def produce_start(self, topic: str) -> None:
        self.request({"op": "produceStart", "topic": topic})

    def produce_stop(self) -> dict:
        return self.request({"op": "produceStop"})

    def consume(self, topic: str) -> dict:
        return self.request({"op": "consume", "topic": topic})

    def close(self) -> None:
        self.process.close()

    def __enter__(self) -> "ClusterClient":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
