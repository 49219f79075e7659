"""JUnit XML reports (``--junit PATH``), the format CI servers read test results in.

One ``<testsuites>`` holding one ``<testsuite>``, with one ``<testcase>`` per config
(``check``) or per mutant (``mutants``), in the shape of the common JUnit schema
(``tests/data/junit.xsd``): a failure carries a message, a type and a text, an error the same.
"""

from __future__ import annotations

import datetime
import io
import socket
import xml.etree.ElementTree as ET
from dataclasses import dataclass

from kraftcheck.traces.text import visible

def _xml_text(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot hold, even escaped (C0 controls other than
    tab, newline and carriage return, lone surrogates, U+FFFE, U+FFFF), written as escapes."""
    return "".join(ch if _xml_char(ch) else f"\\x{ord(ch):02x}" for ch in text)


def _xml_char(ch: str) -> bool:
    code = ord(ch)
    return (code in (0x9, 0xA, 0xD) or 0x20 <= code <= 0xD7FF or 0xE000 <= code <= 0xFFFD
            or 0x10000 <= code <= 0x10FFFF)


@dataclass
class Outcome:
    """What went wrong in a test case: a ``failure`` (the check found a bug, or a mutant escaped)
    or an ``error`` (the model's code failed, so nothing was checked)."""

    message: str
    type: str
    text: str = ""


@dataclass
class Case:
    name: str
    classname: str
    time_s: float
    failure: Outcome | None = None
    error: Outcome | None = None
    output: str = ""


def junit_xml(suite: str, cases: list[Case], *, timestamp: datetime.datetime | None = None) -> str:
    """The report as text, an XML declaration first."""
    stamp = (timestamp or datetime.datetime.now(datetime.timezone.utc)).strftime("%Y-%m-%dT%H:%M:%S")
    total = sum(case.time_s for case in cases)
    counts = {
        "tests": str(len(cases)),
        "failures": str(sum(case.failure is not None for case in cases)),
        "errors": str(sum(case.error is not None for case in cases)),
    }
    root = ET.Element("testsuites", {"name": suite, **counts, "time": f"{total:.3f}"})
    element = ET.SubElement(root, "testsuite", {
        "name": suite, "package": "kraftcheck", "id": "0", "timestamp": stamp,
        "hostname": _text(socket.gethostname() or "localhost"), **counts, "skipped": "0",
        "time": f"{total:.3f}",
    })
    ET.SubElement(element, "properties")
    for case in cases:
        item = ET.SubElement(element, "testcase", {
            "name": _text(case.name), "classname": case.classname, "time": f"{case.time_s:.3f}"})
        for tag, outcome in (("error", case.error), ("failure", case.failure)):
            if outcome is not None:
                child = ET.SubElement(item, tag, {"message": _text(outcome.message), "type": _text(outcome.type)})
                child.text = _xml_text(outcome.text)
                break
        if case.output:
            ET.SubElement(item, "system-out").text = _xml_text(case.output)
    ET.SubElement(element, "system-out")
    ET.SubElement(element, "system-err")
    ET.indent(root)
    out = io.StringIO()
    ET.ElementTree(root).write(out, encoding="unicode", xml_declaration=False)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + out.getvalue() + "\n"


def _text(value: str) -> str:
    return _xml_text(visible(str(value)))


def write_junit(path: str, suite: str, cases: list[Case]) -> None:
    """Write the report to ``path`` atomically (as the ``--json`` summary is written)."""
    from kraftcheck.traces.itf import write_text_atomically

    write_text_atomically(path, junit_xml(suite, cases))
