"""The directory UUID space, shrunk to small ints (KIP-858 "Reserved UUIDs").

A real directory ID is a random 128-bit UUID whose most significant 64 bits are not all
zero or whose least significant bits are at least 100; the first 100 are reserved.  The
model keeps four reserved values, the three with a meaning and one more standing for the
97 reserved for future use, followed by a bounded pool of real ones.
"""

from __future__ import annotations

UNASSIGNED = 0  # DirectoryId.UNASSIGNED = Uuid(0, 1): not yet known where the replica lives
LOST = 1  # DirectoryId.LOST = Uuid(0, 2): in some offline directory that cannot be named
MIGRATING = 2  # DirectoryId.MIGRATING = Uuid(0, 0): placed before directory assignment existed
RESERVED3 = 3  # Uuid(0, 3): one of the other reserved values, never generated
FIRST_REAL = 4  # real directory IDs are FIRST_REAL, FIRST_REAL + 1, ...

RESERVED = (UNASSIGNED, LOST, MIGRATING, RESERVED3)
_NAMES = {UNASSIGNED: "UNASSIGNED", LOST: "LOST", MIGRATING: "MIGRATING", RESERVED3: "RESERVED3"}


def is_reserved(uuid: int) -> bool:
    return uuid < FIRST_REAL


def is_online(directory: int, online_dirs: tuple) -> bool:
    """DirectoryId.isOnline: is a replica on ``directory`` online, given its broker's registered online dirs.

    ``UNASSIGNED`` and ``MIGRATING`` count as online (the broker will say where the replica
    lives), ``LOST`` never does, and a broker that registered no directories at all is an
    old-style broker whose replicas all count as online (KAFKA-16162).
    """
    if directory == UNASSIGNED or directory == MIGRATING:
        return True
    if directory == LOST:
        return False
    if not online_dirs:
        return True
    return directory in online_dirs


def uuid_name(uuid: int) -> str:
    """A readable name: the reserved ones by name, real ones as ``dir-<n>``."""
    if uuid in _NAMES:
        return _NAMES[uuid]
    return f"dir-{uuid - FIRST_REAL}"
