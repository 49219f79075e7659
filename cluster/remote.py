"""A cluster kraftcheck did not start (``kraftcheck cluster --bootstrap``): its processes are not
ours to kill or pause, so only events that need none are played (moves, unclean elections,
waits).  Its brokers' log directories must be readable here, as they are for a cluster run on
this machine: a directory's slot is its place in the broker's sorted list of directories
(describeLogDirs), and its ID is read from its meta.properties."""

from __future__ import annotations

from pathlib import Path

from .nodes import ClusterFailed, ClusterSpec, read_directory_id


class RemoteCluster:
    def __init__(self, client, metadata_log: Path, spec: ClusterSpec, kafka_version: str):
        self.spec = spec
        self.kafka_version = kafka_version
        self.paused: set[int] = set()
        self.workdir = None
        self._metadata_log = metadata_log
        described = client.log_dirs(list(range(spec.brokers)))
        self.dirs: dict[int, list[Path]] = {}
        for b in range(spec.brokers):
            answer = described.get(str(b), {})
            if "dirs" not in answer:
                raise ClusterFailed(f"broker {b} at --bootstrap did not describe its log directories "
                                    f"({answer.get('unreachable', 'no answer')})")
            paths = sorted(Path(p) for p in answer["dirs"])
            if len(paths) != spec.dirs_per_broker:
                raise ClusterFailed(f"broker {b} has {len(paths)} log directories; the scenario says "
                                    f"dirs_per_broker = {spec.dirs_per_broker}")
            for p in paths:
                if not (p / "meta.properties").is_file():
                    raise ClusterFailed(f"broker {b}'s log directory {p} is not readable here (--bootstrap needs "
                                        "a cluster on this machine)")
            self.dirs[b] = paths

    def metadata_log_dir(self) -> Path:
        return self._metadata_log

    def running(self, b: int) -> bool:
        return True

    def dir_path(self, b: int, slot: int) -> Path:
        return self.dirs[b][slot]

    def failed(self, b: int, slot: int) -> bool:
        return not self.dir_path(b, slot).is_dir()

    def directory_id(self, b: int, slot: int) -> str | None:
        return read_directory_id(self.dir_path(b, slot))
