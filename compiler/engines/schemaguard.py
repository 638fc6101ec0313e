"""Catalogue schemas made safe to check: no retrieval, no endless ``$ref`` loops, no backtracking regexes.

A tool's ``args_schema`` comes from whoever wrote or hosts the catalogue, and the values it
checks come from an agent. :func:`analyse` finds, without running a validator, what would
make validation unsafe: nesting past :data:`MAX_SCHEMA_DEPTH`, a ``$ref``/``$dynamicRef``/
``$recursiveRef`` that leaves the document (it would be fetched) or points to nothing, a
loop of references that never moves into the value (endless recursion), a nested
``$schema`` (jsonschema would switch to its stock validator there), and regexes that are
invalid, that RE2 cannot run, or that backtrack exponentially elsewhere. The build reports
these as diagnostics (:mod:`toolcat.build.sources.tools`), ``toolcat verify`` as problems, and the
reader refuses a schema with an error before it validates anything.

:func:`validator_class` is the jsonschema validator the reader and the build use: its
regex keywords run in RE2 (:mod:`toolcat.format.regex`), and :func:`refusing_registry`
makes every reference outside the document fail instead of being retrieved. jsonschema and
referencing are imported lazily here, as in :mod:`toolcat.reader.execution.arguments`.
"""

from __future__ import annotations

import functools
from typing import Any, NamedTuple

from ..format.json_paths import child_path, too_deep
from . import regex

__all__ = [
    "MAX_ARGS_DEPTH",
    "MAX_SCHEMA_DEPTH",
    "REBUILD_HINT",
    "REFERENCE_KEYWORDS",
    "SAME_VALUE",
    "SchemaProblem",
    "analyse",
    "meta_validator",
    "refusing_registry",
    "regex_problems",
    "subschemas",
    "validator_class",
    "validator_for",
]

#: Lists and objects nested deeper than this are refused in a schema (jsonschema recurses per level).
MAX_SCHEMA_DEPTH = 64
#: Lists and objects nested deeper than this are refused in a tool's arguments.
MAX_ARGS_DEPTH = 64
REFERENCE_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
#: Keywords whose value must be a string: jsonschema and referencing assume it (a number crashed them).
STRING_KEYWORDS = ("$schema", "$id", "$anchor", "$dynamicAnchor", *REFERENCE_KEYWORDS)
#: Keywords whose subschemas apply to the same value (a loop through only these never ends).
SAME_VALUE = frozenset(
    {"allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas", "dependencies", "extends"}
)
_ONE_SCHEMA = (
    "additionalItems",
    "additionalProperties",
    "contains",
    "contentSchema",
    "else",
    "if",
    "items",
    "not",
    "propertyNames",
    "then",
    "unevaluatedItems",
    "unevaluatedProperties",
    "extends",
)
_SCHEMA_LIST = ("allOf", "anyOf", "oneOf", "prefixItems", "items", "extends")
_SCHEMA_MAP = ("$defs", "definitions", "dependentSchemas", "patternProperties", "properties", "dependencies")
REBUILD_HINT = "This is a catalogue bug: rebuild it with `toolcat build --strict`, which reports it with file and line."


class SchemaProblem(NamedTuple):
    """One finding of :func:`analyse`; ``path`` is a JSON path under the ``root`` it was given."""

    severity: str  # "error" or "warning"
    code: str
    path: str
    message: str
    hint: str


def _pointer(parent: str, key: object) -> str:
    return f"{parent}/{str(key).replace('~', '~0').replace('/', '~1')}"


def subschemas(schema: dict[str, Any], path: str, pointer: str = "#") -> list[tuple[str, str, str, Any]]:
    """``(keyword, path, JSON pointer, subschema)`` for every schema directly under ``schema`` (refs not followed)."""
    found: list[tuple[str, str, str, Any]] = []
    for key, value in schema.items():
        where, at = child_path(path, key), _pointer(pointer, key)
        if key in _ONE_SCHEMA and isinstance(value, (dict, bool)):
            found.append((key, where, at, value))
        elif key in _SCHEMA_LIST and isinstance(value, list):
            found.extend(
                (key, child_path(where, i), _pointer(at, i), v)
                for i, v in enumerate(value)
                if isinstance(v, (dict, bool))
            )
        elif key in _SCHEMA_MAP and isinstance(value, dict):
            found.extend(
                (key, child_path(where, k), _pointer(at, k), v) for k, v in value.items() if isinstance(v, dict)
            )
    return found


def regex_problems(schema: dict[str, Any], path: str, *, warnings: bool = True) -> list[SchemaProblem]:
    """Problems of the ``pattern`` and ``patternProperties`` regexes of one schema object (errors only without ``warnings``)."""
    out: list[SchemaProblem] = []
    candidates: list[tuple[str, str]] = []
    if isinstance(schema.get("pattern"), str):
        candidates.append((child_path(path, "pattern"), schema["pattern"]))
    if isinstance(schema.get("patternProperties"), dict):
        holder = child_path(path, "patternProperties")
        candidates.extend((child_path(holder, key), key) for key in schema["patternProperties"])
    for where, pattern in candidates:
        error = regex.check(pattern)
        if isinstance(error, regex.InvalidPatternError):
            out.append(
                SchemaProblem("error", "invalid_pattern", where, f"{error.pattern!r} {error.reason}", error.hint)
            )
        elif not warnings:
            continue
        elif error is not None:
            out.append(
                SchemaProblem(
                    "warning",
                    "unsupported_pattern",
                    where,
                    f"{error.pattern!r} {error.reason}: the reader refuses calls whose arguments need it",
                    error.hint,
                )
            )
        else:
            risk = regex.backtracking_risk(pattern)
            if risk:
                out.append(
                    SchemaProblem(
                        "warning",
                        "backtracking_pattern",
                        where,
                        f"{pattern!r} can take exponential time in backtracking regex engines: {risk}",
                        "toolcat runs it in RE2 (linear time), but JavaScript and Python validators backtrack. "
                        "Make each character matchable one way only: (a+)+ → a+, (\\w+\\s?)+ → \\w+(\\s\\w+)*, "
                        "(a|a)* → a*.",
                    )
                )
    return out


def analyse(schema: Any, root: str = "$", *, warnings: bool = True) -> list[SchemaProblem]:
    """Everything that makes ``schema`` unsafe or impossible to check; errors first, each with a hint.

    ``warnings=False`` (the reader) skips what only concerns other engines: RE2-unsupported
    and backtracking-prone patterns, which the reader refuses or runs in linear time anyway.
    """
    if not isinstance(schema, dict):
        return []
    deep = too_deep(schema, MAX_SCHEMA_DEPTH, root)
    if deep is not None:
        return [
            SchemaProblem(
                "error",
                "schema_too_deep",
                deep,
                f"the schema nests lists and objects deeper than {MAX_SCHEMA_DEPTH} levels",
                "Flatten it: move repeated parts under $defs and point to them with $ref.",
            )
        ]
    problems = _References(schema, root, warnings=warnings).problems()
    return sorted(problems, key=lambda p: p.severity != "error")


class _References:
    """Walks every schema object of a document, following references without ever retrieving one."""

    def __init__(self, schema: dict[str, Any], root: str, *, warnings: bool) -> None:
        import referencing.jsonschema  # noqa: PLC0415 - installed with jsonschema; the reader imports it lazily

        self.root_schema = schema
        self.root = root
        self.warnings = warnings
        dialect = schema.get("$schema")
        self.spec = referencing.jsonschema.specification_with(
            dialect if isinstance(dialect, str) else "", default=referencing.jsonschema.DRAFT202012
        )
        usable = {k: v for k, v in schema.items() if k not in STRING_KEYWORDS or isinstance(v, str)}  # see problems()
        self.resolver = refusing_registry().resolver_with_root(self.spec.create_resource(usable))
        self.paths: dict[int, str] = {}
        self.pointers: dict[int, str] = {}
        self.edges: dict[int, list[tuple[int, str]]] = {}
        self.nodes: dict[int, Any] = {}
        self.found: list[SchemaProblem] = []

    def problems(self) -> list[SchemaProblem]:
        queue: list[tuple[Any, str, str, Any]] = [(self.root_schema, self.root, "#", self.resolver)]
        references: list[tuple[dict[str, Any], str, Any]] = []
        while queue or references:
            if not queue:  # the whole keyword tree first, so that targets already have their own paths
                queue.extend(self.follow(*references.pop()))
                continue
            node, path, pointer, resolver = queue.pop()
            if id(node) in self.paths:
                continue
            self.paths[id(node)] = path
            self.pointers[id(node)] = pointer
            self.nodes[id(node)] = node
            edges = self.edges.setdefault(id(node), [])
            if not isinstance(node, dict):
                continue
            wrong = [k for k in STRING_KEYWORDS if k in node and not isinstance(node[k], str)]
            if wrong:
                self.found.extend(
                    SchemaProblem(
                        "error",
                        "keyword_type",
                        child_path(path, k),
                        f"{k} must be a string, got {type(node[k]).__name__}",
                        f"Write {k} as a string (a URI or a name), or remove it.",
                    )
                    for k in wrong
                )
                continue
            resolver = resolver.in_subresource(self.spec.create_resource(node))
            if "$schema" in node and node is not self.root_schema:
                self.found.append(
                    SchemaProblem(
                        "error",
                        "nested_schema",
                        child_path(path, "$schema"),
                        "$schema is only allowed at the root of a tool's schema",
                        "Remove it: the whole schema is checked with the root's dialect.",
                    )
                )
            self.found.extend(regex_problems(node, path, warnings=self.warnings))
            references.append((node, path, resolver))
            for keyword, where, at, sub in subschemas(node, path, pointer):
                if keyword in SAME_VALUE:
                    edges.append((id(sub), where))
                queue.append((sub, where, at, resolver))
        self.find_cycle()
        return self.found

    def follow(self, node: dict[str, Any], path: str, resolver: Any) -> list[tuple[Any, str, str, Any]]:
        """Resolve the references of ``node``; record edges; targets to walk next."""
        from referencing.exceptions import InvalidAnchor, NoSuchAnchor, PointerToNowhere  # noqa: PLC0415 - referencing is an optional extra

        targets: list[tuple[Any, str, str, Any]] = []
        for keyword in REFERENCE_KEYWORDS:
            ref = node.get(keyword)
            if not isinstance(ref, str):
                continue
            where = child_path(path, keyword)
            try:
                resolved = resolver.lookup(ref)
            except (PointerToNowhere, NoSuchAnchor, InvalidAnchor):
                self.found.append(
                    SchemaProblem(
                        "error",
                        "dangling_ref",
                        where,
                        f"{keyword} {ref!r} points to nothing in this schema",
                        "Point it to a definition that exists, e.g. '#/$defs/<name>', or add that definition.",
                    )
                )
                continue
            except Exception:
                self.found.append(
                    SchemaProblem(
                        "error",
                        "remote_ref",
                        where,
                        f"remote {keyword} {ref!r} is not allowed: it points outside this schema, and toolcat never retrieves schemas",
                        "Copy the referenced definition into $defs (inline it) and point to '#/$defs/<name>'.",
                    )
                )
                continue
            target = resolved.contents
            self.edges.setdefault(id(node), []).append((id(target), where))
            targets.append((target, f"{where}→{ref}", ref, resolved.resolver))
            if keyword == "$dynamicRef" and "#" in ref and "/" not in ref.partition("#")[2]:
                name = ref.partition("#")[2]
                self.edges[id(node)].extend(
                    (id(n), where) for n in self.all_nodes() if isinstance(n, dict) and n.get("$dynamicAnchor") == name
                )
            if keyword == "$recursiveRef":
                self.edges[id(node)].extend(
                    (id(n), where)
                    for n in self.all_nodes()
                    if isinstance(n, dict) and n.get("$recursiveAnchor") is True
                )
        return targets

    def all_nodes(self) -> list[Any]:
        """Every schema object under the root (by keywords, refs not followed)."""
        out: list[Any] = []
        stack: list[Any] = [self.root_schema]
        while stack:
            node = stack.pop()
            out.append(node)
            if isinstance(node, dict):
                stack.extend(sub for *_, sub in subschemas(node, ""))
        return out

    def find_cycle(self) -> None:
        """Report one loop of same-value edges (it contains a reference: keywords alone form a tree)."""
        state: dict[int, int] = {}  # 1 = on the current path, 2 = done
        for start in self.edges:
            if state.get(start):
                continue
            path: list[tuple[int, str]] = [(start, self.paths.get(start, self.root))]
            iterators = [iter(self.edges.get(start, []))]
            state[start] = 1
            while iterators:
                step = next(iterators[-1], None)
                if step is None:
                    state[path[-1][0]] = 2
                    path.pop()
                    iterators.pop()
                    continue
                target, where = step
                if state.get(target) == 1:
                    index = next(i for i, (n, _) in enumerate(path) if n == target)
                    loop = [self.pointers.get(n, "?") for n, _ in path[index:]] + [self.pointers.get(target, "?")]
                    self.found.append(
                        SchemaProblem(
                            "error",
                            "ref_cycle",
                            where,
                            "$ref cycle that never moves into the value (validation would recurse forever): "
                            + " → ".join(loop),
                            "Break the loop: a schema may refer back to itself only through properties, items or "
                            "another keyword that descends into the value (a tree node's children.items may $ref "
                            "the node).",
                        )
                    )
                    return
                if not state.get(target):
                    state[target] = 1
                    path.append((target, where))
                    iterators.append(iter(self.edges.get(target, [])))


# -- validation --------------------------------------------------------------------------------
@functools.cache
def refusing_registry() -> Any:
    """A ``referencing.Registry`` whose retrieve refuses every URI: nothing is fetched or read."""
    import referencing  # noqa: PLC0415 - referencing is an optional extra: imported only on the path that needs it
    import referencing.exceptions  # noqa: PLC0415 - referencing is an optional extra

    def refuse(uri: str) -> Any:
        raise referencing.exceptions.NoSuchResource(ref=uri)  # type: ignore[call-arg]

    return referencing.Registry(retrieve=refuse)  # type: ignore[call-arg]


@functools.cache
def meta_validator(cls: Any) -> Any:
    """A validator of a draft's metaschema, without format checks (``check_schema`` runs Python's ``re``)."""
    return cls(cls.META_SCHEMA)


def _matches(pattern: str, text: str, *, skip_unsupported: bool) -> bool:
    try:
        return regex.search(pattern, text)
    except regex.UnsupportedPatternError:
        if skip_unsupported:
            return True
        raise


@functools.cache
class _Re2Keywords:
    """jsonschema's regex keywords, and the ones that depend on them, with RE2 in place of Python's ``re``.

    Each method is a jsonschema keyword function ``(validator, value, instance, schema)``; ``legacy`` is a draft
    2019-09 validator (``$recursiveRef``, applicator-era ``unevaluatedProperties``).
    """

    def __init__(self, *, skip_unsupported: bool, legacy: bool) -> None:
        from jsonschema.exceptions import ValidationError  # noqa: PLC0415 - jsonschema is the [build]/[mcp] extra

        self.skip_unsupported = skip_unsupported
        self.legacy = legacy
        self.error = ValidationError

    def matches(self, pattern: str, text: str) -> bool:
        return _matches(pattern, text, skip_unsupported=self.skip_unsupported)

    def pattern(self, validator: Any, patrn: Any, instance: Any, _schema: Any) -> Any:
        if validator.is_type(instance, "string") and not self.matches(patrn, instance):
            yield self.error(f"{instance!r} does not match {patrn!r}")

    def pattern_properties(self, validator: Any, value: Any, instance: Any, _schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        for patrn, subschema in value.items():
            for key, item in instance.items():
                if self.matches(patrn, key):
                    yield from validator.descend(item, subschema, path=key, schema_path=patrn)

    def _extras(self, instance: dict[str, Any], schema: dict[str, Any]) -> list[str]:
        properties = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        return [key for key in instance if key not in properties and not any(self.matches(p, key) for p in patterns)]

    def additional_properties(self, validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        extra = self._extras(instance, schema)
        if validator.is_type(value, "object"):
            for key in extra:
                yield from validator.descend(instance[key], value, path=key)
        elif not value and extra:
            yield self.error(_additional_message(extra, schema))

    def evaluated_keys(self, validator: Any, instance: dict[str, Any], schema: Any) -> set[str]:
        """jsonschema's ``find_evaluated_property_keys_by_schema``, with RE2 for patternProperties."""
        if not isinstance(schema, dict):
            return set()
        keys = self._referenced_keys(validator, instance, schema) | self._property_keys(validator, instance, schema)
        for patrn in schema.get("patternProperties", {}) or {}:
            keys |= {k for k in instance if self.matches(patrn, k)}
        for name, sub in (schema.get("dependentSchemas") or {}).items():
            if name in instance:
                keys |= self.evaluated_keys(validator, instance, sub)
        for keyword in ("allOf", "oneOf", "anyOf"):
            for sub in schema.get(keyword, []) or []:
                if next(validator.descend(instance, sub), None) is None:
                    keys |= self.evaluated_keys(validator, instance, sub)
        return keys | self._conditional_keys(validator, instance, schema)

    def _referenced_keys(self, validator: Any, instance: dict[str, Any], schema: dict[str, Any]) -> set[str]:
        keys: set[str] = set()
        for keyword in ("$ref", "$recursiveRef" if self.legacy else "$dynamicRef"):
            if keyword not in schema:
                continue
            if keyword == "$recursiveRef":
                from referencing.jsonschema import lookup_recursive_ref  # noqa: PLC0415 - with jsonschema, as above

                resolved = lookup_recursive_ref(validator._resolver)  # noqa: SLF001 - as jsonschema does
            else:
                resolved = validator._resolver.lookup(schema[keyword])  # noqa: SLF001
            evolved = validator.evolve(schema=resolved.contents, _resolver=resolved.resolver)
            keys |= self.evaluated_keys(evolved, instance, resolved.contents)
        return keys

    def _property_keys(self, validator: Any, instance: dict[str, Any], schema: dict[str, Any]) -> set[str]:
        keys: set[str] = set()
        for keyword in ("properties", "additionalProperties", "unevaluatedProperties"):
            sub = schema.get(keyword)
            if sub is None:
                continue
            if not (self.legacy or keyword == "properties"):
                keys |= {k for k, v in instance.items() if next(validator.descend(v, sub), None) is None}
            elif sub is True:
                keys |= set(instance)
            elif isinstance(sub, dict):
                keys |= set(sub) & set(instance)
        return keys

    def _conditional_keys(self, validator: Any, instance: dict[str, Any], schema: dict[str, Any]) -> set[str]:
        if "if" not in schema:
            return set()
        if validator.evolve(schema=schema["if"]).is_valid(instance):
            keys = self.evaluated_keys(validator, instance, schema["if"])
            return keys | (self.evaluated_keys(validator, instance, schema["then"]) if "then" in schema else set())
        return self.evaluated_keys(validator, instance, schema["else"]) if "else" in schema else set()

    def unevaluated_properties(self, validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        if not validator.is_type(instance, "object"):
            return
        seen = self.evaluated_keys(validator, instance, schema)
        bad = [
            key
            for key in instance
            if key not in seen
            and next(validator.descend(instance[key], value, path=key, schema_path=key), None) is not None
        ]
        if bad:
            yield self.error(_unevaluated_message(bad, value))


def _additional_message(extra: list[str], schema: dict[str, Any]) -> str:
    """jsonschema's own words for properties that ``additionalProperties: false`` refuses."""
    if "patternProperties" in schema:
        verb = "does" if len(extra) == 1 else "do"
        joined = ", ".join(repr(each) for each in sorted(extra))
        patterns = ", ".join(repr(each) for each in sorted(schema["patternProperties"]))
        return f"{joined} {verb} not match any of the regexes: {patterns}"
    names = ", ".join(repr(each) for each in sorted(extra, key=str))
    verb = "was" if len(extra) == 1 else "were"
    return f"Additional properties are not allowed ({names} {verb} unexpected)"


def _unevaluated_message(bad: list[str], value: Any) -> str:
    """jsonschema's own words for properties that ``unevaluatedProperties`` refuses."""
    names = ", ".join(repr(each) for each in sorted(bad, key=str))
    if value is False:
        verb = "was" if len(bad) == 1 else "were"
        return f"Unevaluated properties are not allowed ({names} {verb} unexpected)"
    verb = "is" if len(bad) == 1 else "are"
    return f"Unevaluated properties are not valid under the given schema ({names} {verb} unevaluated and invalid)"


def validator_class(cls: Any, *, skip_unsupported: bool = False) -> Any:
    """``cls`` with RE2 for ``pattern``, ``patternProperties``, ``additionalProperties`` and ``unevaluatedProperties``.

    A pattern RE2 cannot run raises :class:`~toolcat.format.regex.UnsupportedPatternError` (the
    reader refuses the call), or counts as a match with ``skip_unsupported`` (the build, which
    has already warned about it).
    """
    from jsonschema import validators  # noqa: PLC0415 - jsonschema is the [build]/[mcp] extra

    re2 = _Re2Keywords(skip_unsupported=skip_unsupported, legacy="$recursiveRef" in cls.VALIDATORS)
    keywords = {
        "pattern": re2.pattern,
        "patternProperties": re2.pattern_properties,
        "additionalProperties": re2.additional_properties,
        "unevaluatedProperties": re2.unevaluated_properties,
    }
    return validators.extend(cls, {k: v for k, v in keywords.items() if k in cls.VALIDATORS})


def validator_for(schema: dict[str, Any], *, skip_unsupported: bool = False) -> Any:
    """A safe validator of ``schema`` (RE2 regexes, no retrieval); call :func:`analyse` first."""
    import jsonschema  # noqa: PLC0415 - jsonschema is an optional extra: imported only on the path that needs it
    from jsonschema import validators  # noqa: PLC0415 - jsonschema is an optional extra

    cls = validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return validator_class(cls, skip_unsupported=skip_unsupported)(schema, registry=refusing_registry())
