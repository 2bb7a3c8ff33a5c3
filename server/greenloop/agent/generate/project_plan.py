"""ProjectPlan: the generation plan's structured output (interfaces + file list), validated for one template."""

from __future__ import annotations

import posixpath
import re
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.json_schema import SkipJsonSchema

from greenloop.agent.generate.layouts import Layout, crate_name
from greenloop.errors import GreenloopError

_PACKAGE_SPEC = re.compile(r"^[A-Za-z0-9@][A-Za-z0-9._\-/@<>=!~\[\],]*$")
_MODULE_HEADING = re.compile(r"^#{1,6}[ \t]+`?((?:[\w.-]+/)*[\w-]+\.\w+)`?[ \t]*$", re.M)  # `## pkg/calc.py`


class PlannedFile(BaseModel):
    """One file of the project: where it goes, what it is for, what it needs."""

    model_config = ConfigDict(extra="ignore")
    path: str = Field(description="Path relative to the project root, with '/' separators.")
    purpose: str = Field(default="", description="What the file contains: its exported names and their job.")
    component: str = Field(default="main", description="The component (build step) the file belongs to.")
    depends_on: list[str] = Field(
        default_factory=list, description="Paths of other planned files this one imports or tests."
    )
    test: bool = Field(default=False, description="True for a test file.")


class ProjectPlan(BaseModel):
    """The shared-interfaces document and the file list every file is generated from."""

    model_config = ConfigDict(extra="ignore", title="ProjectPlan")
    # Set on the per-template subclass that `plan_schema` makes; None: no template checks.
    layout: ClassVar[Layout | None] = None
    max_files: ClassVar[int] = 40
    # the interfaces' `## <path>` modules, for the schema the model fills in after writing them
    modules: ClassVar[tuple[str, ...]] = ()

    name: str = Field(default="app", description="Short project name, e.g. 'word_count'.")
    summary: str = Field(default="", description="Two or three sentences: what the program does.")
    interfaces: str = Field(
        description="Markdown: every module, its exported functions/classes with full signatures, "
        "and the data shapes they exchange. Files are written from this, so it must be complete."
    )
    components: list[str] = Field(
        default_factory=list, description="Component names in build order (each has its files and tests)."
    )
    files: list[PlannedFile] = Field(min_length=1, description="Every file of the project, tests included.")
    packages: list[str] = Field(
        default_factory=list, description="Third-party packages the code needs (empty when none)."
    )

    @field_validator("packages")
    @classmethod
    def _packages(cls, value: list[str]) -> list[str]:
        out: list[str] = []
        for spec in (p.strip() for p in value):
            if not spec:
                continue
            if not _PACKAGE_SPEC.match(spec):
                raise ValueError(f"package {spec!r} is not a plain package spec (name, optionally a version)")
            if spec not in out:
                out.append(spec)
        return out

    @model_validator(mode="after")
    def _check(self) -> ProjectPlan:
        self.name = self.name.strip() or "app"
        self._check_paths()
        self._check_template()
        if not any(not f.test for f in self.files):
            self._add_left_out_sources()
        self._repair_links()
        if not any(not f.test for f in self.files):
            raise ValueError("the plan has only test files; add the source files they test")
        if not any(f.test for f in self.files):
            self._add_test_file()
        if len(self.files) > self.max_files:
            raise ValueError(f"the plan has {len(self.files)} files; keep it to at most {self.max_files}")
        return self

    def _add_test_file(self) -> None:
        """A plan without tests gets one test file (the template's convention) covering every source file."""
        if self.layout is None:
            raise ValueError('the plan has no test file; add at least one test file (with "test": true)')
        path = self.layout.test_path.format(name=crate_name(self.name))
        if any(f.path == path for f in self.files):
            raise ValueError(f'the plan has no test file; mark {path} as one ("test": true) or add one')
        layout = self.layout
        sources = [f.path for f in self.files if layout.is_source(f.path)]
        self.files.append(
            PlannedFile(
                path=path,
                purpose="Tests of the interfaces above, a few clear cases per exported function "
                "(added by greenloop: the plan listed no tests).",
                component=self.components[-1],
                depends_on=sources,
                test=True,
            )
        )

    def _add_left_out_sources(self) -> None:
        """A plan of tests alone gets the source files they depend on, else the interfaces' modules
        (of the template's language); each test then depends on them.

        Qwen2.5-Coder 0.5B listed only `tests/test_column_stats.py` and the like, depending on
        `csvstats.py` (or on another test), and sent the same list back to every repair. Elsewhere
        an unknown dependency is dropped: a file only named in passing is not worth a model call.
        """
        layout = self.layout
        if layout is None:
            return
        tests = list(self.files)
        wanted = [dep for f in tests for dep in f.depends_on]
        wanted += list(self.modules or interface_modules(self.interfaces))
        added: list[str] = []
        for dep in wanted:
            try:
                path = normalize_path(dep)
            except ValueError:
                continue
            if path in added or not layout.is_source(path):
                continue
            added.append(path)
            self.files.append(
                PlannedFile(
                    path=path,
                    purpose="The code the tests test, as the interfaces describe it "
                    "(added by greenloop: the file list had only tests).",
                    component=tests[0].component.strip() or "main",
                )
            )
        for f in tests:
            f.depends_on += [p for p in added if p not in f.depends_on]

    def _check_paths(self) -> None:
        """Normalize every path; a file listed twice (however spelled) is one file: the first entry,
        with the dependencies of both. The 0.5B model listed `tests/test_stack.py` twice and did so
        again on every repair request."""
        first: dict[str, PlannedFile] = {}
        for f in self.files:
            f.path = normalize_path(f.path)
            if f.path in first:
                kept = first[f.path]
                kept.depends_on += [d for d in f.depends_on if d not in kept.depends_on]
            else:
                first[f.path] = f
        self.files = list(first.values())

    def _check_template(self) -> None:
        layout = self.layout
        if layout is None:
            return
        wrong = [(f.path, other) for f in self.files if (other := layout.contradicts(f.path))]
        if wrong:
            listed = ", ".join(f"{path} ({other})" for path, other in wrong)
            raise ValueError(
                f"the project template is {layout.name} ({layout.language}) but these files belong to "
                f"another language: {listed}; write every file in {layout.language}"
            )
        for f in self.files:  # the test runner decides what is a test, not the model's flag
            f.test = layout.is_test(f.path)
        if layout.required_any and not any(f.path in layout.required_any for f in self.files):
            raise ValueError(f"a {layout.name} project needs one of: {', '.join(layout.required_any)}")

    def _repair_links(self) -> None:
        """Drop unknown/self dependencies; make `components` list every file's component, in order."""
        paths = {f.path for f in self.files}
        for f in self.files:
            f.component = f.component.strip() or "main"
            deps = []
            for dep in f.depends_on:
                try:
                    norm = normalize_path(dep)
                except ValueError:
                    continue
                if norm in paths and norm != f.path and norm not in deps:
                    deps.append(norm)
            f.depends_on = deps
        used = [f.component for f in self.files]
        order = [c.strip() for c in self.components if c.strip() in used]
        order += [c for c in used if c not in order]
        self.components = list(dict.fromkeys(order))

    # -- queries ---------------------------------------------------------------------------------

    def file(self, path: str) -> PlannedFile:
        for f in self.files:
            if f.path == path:
                return f
        raise KeyError(path)

    def files_of(self, component: str) -> list[PlannedFile]:
        return [f for f in self.files if f.component == component]


def interface_modules(interfaces: str) -> list[str]:
    """The `## <path>` headings of an interfaces document, in order, each once."""
    return list(dict.fromkeys(m.group(1) for m in _MODULE_HEADING.finditer(interfaces)))


def normalize_path(path: str) -> str:
    """A clean relative posix path, or ValueError saying why it is not one."""
    raw = path.strip().strip("`").replace("\\", "/")
    while raw.startswith("./"):
        raw = raw[2:]
    if not raw:
        raise ValueError("a file has an empty path")
    if raw.startswith("/") or re.match(r"^[A-Za-z]:", raw):
        raise ValueError(f"{path!r} is absolute; use a path relative to the project root")
    if re.search(r"<[^<>/]*>", raw):  # copied from the layout guidance's `<package>/<module>.py`
        raise ValueError(f"{path!r} is a placeholder; name the real file")
    norm = posixpath.normpath(raw)
    if norm == ".." or norm.startswith("../") or "/../" in f"/{raw}/":
        raise ValueError(f"{path!r} escapes the project folder; use a path inside it")
    if norm.split("/", 1)[0] in (".git", ".greenloop"):
        raise ValueError(f"{path!r} is inside {norm.split('/', 1)[0]}/, which a project may not use")
    if raw.endswith("/"):
        raise ValueError(f"{path!r} is a folder; list files, not folders")
    return norm


def plan_schema(
    layout: Layout, max_files: int, *, interfaces: bool = True, modules: tuple[str, ...] = ()
) -> type[ProjectPlan]:
    """ProjectPlan validated against one template. `interfaces=False`: the schema the model fills in
    after writing the interfaces as Markdown (the field is left out of the schema and defaults to "";
    `modules` are that document's modules)."""
    namespace: dict[str, Any] = {
        "layout": layout, "max_files": max_files, "modules": modules, "__module__": __name__
    }
    if not interfaces:
        namespace["__annotations__"] = {"interfaces": SkipJsonSchema[str]}
        namespace["interfaces"] = ""
    suffix = "" if interfaces else "_files"
    return type(f"ProjectPlan_{layout.name}{suffix}", (ProjectPlan,), namespace)


def validate_plan(data: object, layout: Layout, max_files: int, *, source: str) -> ProjectPlan:
    """A plan from a dict (an edited plan file); GreenloopError saying what to fix."""
    try:
        return plan_schema(layout, max_files).model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(_problem(e) for e in exc.errors())
        raise GreenloopError(f"{source}: the plan is not usable: {problems}. Edit it and run again.") from exc


def _problem(error: Any) -> str:
    where = ".".join(str(part) for part in error.get("loc", ()))
    message = str(error.get("msg", "")).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
