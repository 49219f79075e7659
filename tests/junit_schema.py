"""Validate an XML document against ``tests/data/junit.xsd`` with ``xml.etree`` alone.

No XSD validator is installed with kraftcheck, so this reads the schema itself and enforces the
part of XML Schema it uses: global and named complex types, ``sequence`` and ``choice`` with
``minOccurs``/``maxOccurs``, ``simpleContent`` extensions of ``xs:string``, attributes with
``use="required"`` (and no attribute the schema does not declare), text only where the schema
allows it, and the types ``xs:string``, ``xs:token``, ``xs:int``, ``xs:decimal`` and
``xs:dateTime``.  Anything else in the schema is an error, so that the schema cannot say more
than what is checked.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from pathlib import Path

SCHEMA = Path(__file__).resolve().parent / "data" / "junit.xsd"
XS = "{http://www.w3.org/2001/XMLSchema}"
UNBOUNDED = float("inf")

TYPES = {
    "xs:string": lambda text: True,
    "xs:token": lambda text: text == " ".join(text.split()) and "\t" not in text,
    "xs:int": lambda text: re.fullmatch(r"[+-]?\d+", text) is not None and -2**31 <= int(text) < 2**31,
    "xs:decimal": lambda text: re.fullmatch(r"[+-]?(\d+(\.\d*)?|\.\d+)", text) is not None,
    "xs:dateTime": lambda text: re.fullmatch(
        r"-?\d{4,}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?", text) is not None,
}


class Invalid(AssertionError):
    pass


def validate(document: str, schema: Path = SCHEMA) -> ET.Element:
    """The document's root, after checking it against ``schema``; :class:`Invalid` says where not."""
    xsd = ET.parse(schema).getroot()
    named = {t.get("name"): t for t in xsd.findall(f"{XS}complexType")}
    roots = {e.get("name"): e for e in xsd.findall(f"{XS}element")}
    root = ET.fromstring(document)
    if root.tag not in roots:
        raise Invalid(f"root element <{root.tag}> is not one the schema declares ({', '.join(roots)})")
    _element(root, roots[root.tag], named, root.tag)
    return root


def _element(node: ET.Element, declaration: ET.Element, named: dict, where: str) -> None:
    type_name = declaration.get("type")
    if type_name in TYPES:
        if node.attrib or len(node):
            raise Invalid(f"{where}: {type_name} content holds no attributes or elements")
        _value(node.text or "", type_name, where)
        return
    complex_type = named[type_name] if type_name else declaration.find(f"{XS}complexType")
    if complex_type is None:
        raise Invalid(f"{where}: the schema gives no type")
    _complex(node, complex_type, named, where)


def _complex(node: ET.Element, complex_type: ET.Element, named: dict, where: str) -> None:
    attributes, particle, text_type = [], None, None
    for part in complex_type:
        if part.tag == f"{XS}attribute":
            attributes.append(part)
        elif part.tag in (f"{XS}sequence", f"{XS}choice"):
            particle = part
        elif part.tag == f"{XS}simpleContent":
            extension = part.find(f"{XS}extension")
            text_type = extension.get("base")
            attributes.extend(extension.findall(f"{XS}attribute"))
            if any(child.tag != f"{XS}attribute" for child in extension) or text_type not in TYPES:
                raise Invalid(f"schema: unsupported simpleContent in {complex_type.get('name')}")
        else:
            raise Invalid(f"schema: unsupported {part.tag}")
    declared = {a.get("name"): a for a in attributes}
    for name, value in node.attrib.items():
        if name not in declared:
            raise Invalid(f"{where}: attribute {name!r} is not declared")
        _value(value, declared[name].get("type"), f"{where}@{name}")
    for name, attribute in declared.items():
        if attribute.get("use") == "required" and name not in node.attrib:
            raise Invalid(f"{where}: required attribute {name!r} is missing")
    if text_type is not None:
        if len(node):
            raise Invalid(f"{where}: simple content holds no elements")
        _value(node.text or "", text_type, where)
        return
    for text in [node.text, *(child.tail for child in node)]:
        if text and text.strip():
            raise Invalid(f"{where}: text {text.strip()[:40]!r} where only elements are allowed")
    children = list(node)
    position = _match(children, 0, particle, named, where) if particle is not None else 0
    if position != len(children):
        raise Invalid(f"{where}: unexpected <{children[position].tag}> at child {position + 1}")


def _occurs(particle: ET.Element) -> tuple[int, float]:
    high = particle.get("maxOccurs", "1")
    return int(particle.get("minOccurs", "1")), UNBOUNDED if high == "unbounded" else int(high)


def _match(children: list, position: int, particle: ET.Element, named: dict, where: str) -> int:
    """Match ``particle`` (with its occurrences) from ``children[position]`` on, greedily; the
    position after it."""
    low, high = _occurs(particle)
    count = 0
    while count < high:
        after = _match_once(children, position, particle, named, where)
        if after is None or after == position and count >= low:
            break
        position, count = after, count + 1
    if count < low:
        found = f"<{children[position].tag}>" if position < len(children) else "the end"
        raise Invalid(f"{where}: expected {_describe(particle)} at child {position + 1}, found {found}")
    return position


def _match_once(children: list, position: int, particle: ET.Element, named: dict, where: str) -> int | None:
    if particle.tag == f"{XS}element":
        if position < len(children) and children[position].tag == particle.get("name"):
            child = children[position]
            _element(child, particle, named, f"{where}/{child.tag}[{position + 1}]")
            return position + 1
        return None
    if particle.tag == f"{XS}sequence":
        for part in particle:
            position = _match(children, position, part, named, where)
        return position
    if particle.tag == f"{XS}choice":
        for part in particle:
            if position < len(children) and part.tag == f"{XS}element" and children[position].tag == part.get("name"):
                return _match(children, position, part, named, where)
        return None
    raise Invalid(f"schema: unsupported {particle.tag}")


def _describe(particle: ET.Element) -> str:
    if particle.tag == f"{XS}element":
        return f"<{particle.get('name')}>"
    return " or ".join(_describe(part) for part in particle)


def _value(text: str, type_name: str | None, where: str) -> None:
    check = TYPES.get(type_name or "")
    if check is None:
        raise Invalid(f"schema: unsupported type {type_name!r}")
    if not check(text):
        raise Invalid(f"{where}: {text[:40]!r} is not an {type_name}")
