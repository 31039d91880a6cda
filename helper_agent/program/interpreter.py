"""The interpreter: walk a program's AST against the API and record what it would do.

Nothing is executed. The interpreter accepts only the language below, binds names to the objects
the program constructs, unrolls `for` loops, and records the API calls in execution order. Anything
else is a `ProgramError` (a `SemanticError` when the text is in the language but makes no sense, a
`LimitError` when it is too big) whose message says what was wrong, where, and what to write.

The language (statements at top level or in a `for` body), as `prompts/api.md` documents it:

    name = InteractionObject("Class", landmark="Class", attributes=["clean", ...])
    name = AgentCorrective()
    name.method(...)                       # an API method on a bound object or agent
    move_back() / move_closer() / move_alternate_viewpoint() / do_nothing()
    for x in ["Mug", "Cup"]: ...           # literal list or tuple of strings/numbers, <= 20 items
    for i in range(n): ...                 # integer literals, <= 20 iterations
    # comments

Tolerated forms small models write, which change nothing the documentation says: `name = other_name`
(the same object), `InteractionObject("Class").method()` (an anonymous object), a class name in quotes
where an object is expected (`mug.place("CounterTop")`, a new InteractionObject of that class,
noted), `attributes` as one string, attribute spellings such as "washed" or "toast" (normalised to
"clean", "toasted"), the documented parameter names as keywords (`place(receptacle=...)`), an
f-string without expressions, and the no-ops `pass`, `...` and string statements (docstrings).

Not in the language, each with its own message: `def`/`async def` (no wrapper functions: the steps
go at top level), `if` (including `if __name__ == "__main__":`), `print()` and any other function,
`while`, imports, classes, attribute reads, computed values. Limits: 8000 characters of code, 20
items per loop, 400 loop-body runs, 200 objects and 300 actions per program
(`helper_agent.program.api`).
"""

from __future__ import annotations

import ast
import difflib
import re
from dataclasses import dataclass

from helper_agent.program import api
from helper_agent.program.errors import LimitError, ProgramError, SemanticError, clip
from helper_agent.program.extract import ExtractedCode
from helper_agent.program.parsed import Action, ObjectDecl, Step

CLASS_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9 _\-]{0,59}$")
_FORBIDDEN_CALLS = {
    "eval",
    "exec",
    "compile",
    "open",
    "getattr",
    "setattr",
    "delattr",
    "globals",
    "locals",
    "vars",
    "input",
    "breakpoint",
    "help",
    "dir",
    "type",
    "object",
    "super",
}
_WHY_ONLY_API = "programs may only create InteractionObject(...) values and call their methods"
_WHY_NO_DEF = (
    "functions cannot be defined; write the steps at top level without 'def', e.g. "
    "mug = InteractionObject(\"Mug\") and then mug.pickup()"
)
_WHY_NO_DUNDER = (
    "double-underscore names and attributes are not allowed: use only InteractionObject(...), its "
    "methods and the agent moves"
)
_RESERVED = frozenset({*api.API_NAMES, "range", "print"})


def _has_dunder(node: ast.AST) -> bool:
    for n in ast.walk(node):
        name = None
        if isinstance(n, ast.Name):
            name = n.id
        elif isinstance(n, ast.Attribute):
            name = n.attr
        elif isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = n.name
        if name is not None and name.startswith("__"):
            return True
    return False


def _range_length(start: int, stop: int, step: int) -> int:
    """len(range(start, stop, step)) for integers of any size (len() overflows past sys.maxsize)."""
    if step > 0:
        return max(0, (stop - start + step - 1) // step)
    return max(0, (start - stop - step - 1) // -step)


@dataclass(frozen=True)
class _Obj:
    index: int  # -1: an object constructed in a loop body that is only being checked


@dataclass(frozen=True)
class _Agent:
    pass


@dataclass(frozen=True)
class _Value:
    value: str | int | float


_Binding = _Obj | _Agent | _Value


class Interpreter:
    """Walks one program's AST; `run` fills `objects`, `steps` and `notes` or raises ProgramError."""

    def __init__(self, code: ExtractedCode) -> None:
        self.code = code
        self.lines = code.text.split("\n")
        self.env: dict[str, _Binding] = {}
        self.objects: list[ObjectDecl] = []
        self.steps: list[Step] = []
        self.notes: list[str] = list(code.notes)
        self.dry = 0
        self.iterations = 0
        self.n_actions = 0

    # -- errors ---------------------------------------------------------------------------------

    def snippet(self, node: ast.AST) -> str:
        try:
            seg = ast.get_source_segment(self.code.text, node)
        except Exception:  # noqa: BLE001 - a location outside the text: no snippet
            seg = None
        if not seg:
            line = getattr(node, "lineno", None)
            seg = self.lines[line - 1].strip() if line and 1 <= line <= len(self.lines) else ""
        return clip(seg.strip())

    def column(self, node: ast.AST) -> int | None:
        """The 1-based character column of `node` in the submitted text (ast counts UTF-8 bytes)."""
        line = getattr(node, "lineno", None)
        if line is None or not 1 <= line <= len(self.lines):
            return None
        byte_col = getattr(node, "col_offset", 0) or 0
        chars = len(self.lines[line - 1].encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))
        return chars + 1 + self.code.indent.get(line, 0)

    def error(
        self, node: ast.AST, reason: str, *, quote: bool = True, kind: type[ProgramError] = ProgramError
    ) -> ProgramError:
        snippet = self.snippet(node)
        text = f"'{snippet}' {reason}" if quote and snippet else reason
        return kind(text, line=getattr(node, "lineno", None), col=self.column(node), snippet=snippet or None)

    def semantic(self, node: ast.AST, reason: str) -> ProgramError:
        return self.error(node, reason, kind=SemanticError)

    def not_allowed(self, node: ast.AST, why: str = _WHY_ONLY_API) -> ProgramError:
        if not isinstance(node, ast.If | ast.FunctionDef | ast.AsyncFunctionDef) and _has_dunder(node):
            why = _WHY_NO_DUNDER
        return self.error(node, f"is not allowed: {why}")

    # -- program --------------------------------------------------------------------------------

    def run(self, tree: ast.Module) -> None:
        self.block(tree.body)

    def block(self, body: list[ast.stmt]) -> None:
        previous_end = 0
        for stmt in body:
            self.one_statement_per_line(stmt, previous_end)
            previous_end = stmt.end_lineno or stmt.lineno
            self.statement(stmt)

    def one_statement_per_line(self, node: ast.stmt, previous_end: int) -> None:
        """The API document's "one statement per line": no `;` between statements, no backslash
        continuation, no `for` with its body on the same line (each once passed, a larger language
        than documented)."""
        if node.lineno <= previous_end:
            raise self.error(node, "shares its line with the statement before it: write one statement "
                             "per line, without ';'")
        last = node.lineno if isinstance(node, ast.For) else (node.end_lineno or node.lineno)
        for number in range(node.lineno, last):
            if 0 < number <= len(self.lines) and self.lines[number - 1].rstrip().endswith("\\"):
                raise ProgramError("a backslash continues the statement on the next line: write one "
                                   "statement per line", line=number, snippet=self.lines[number - 1].strip())
        if isinstance(node, ast.For) and node.body and node.body[0].lineno == node.lineno:
            raise self.error(node.body[0], "is on the 'for' line: put the loop's body on its own indented "
                             "lines")

    def statement(self, node: ast.stmt) -> None:
        if isinstance(node, ast.Expr):
            self.expr_statement(node)
        elif isinstance(node, ast.Assign):
            self.assign(node)
        elif isinstance(node, ast.For):
            self.for_loop(node)
        elif isinstance(node, ast.Pass):
            return
        elif isinstance(node, ast.FunctionDef):
            raise self.not_allowed(node, _WHY_NO_DEF)
        elif isinstance(node, ast.AsyncFunctionDef):
            raise self.not_allowed(node, "async functions are not part of the API: " + _WHY_NO_DEF)
        elif isinstance(node, ast.If):
            if self.is_main_guard(node):
                raise self.not_allowed(node, "the program is not a script: write the steps at top level "
                                       "without 'if __name__ == \"__main__\":'")
            raise self.not_allowed(
                node, "'if' statements are not allowed: the program cannot inspect the world; "
                "write the steps unconditionally"
            )
        else:
            raise self.not_allowed(node, self.why_statement(node))

    def why_statement(self, node: ast.stmt) -> str:
        if isinstance(node, ast.Import | ast.ImportFrom):
            return _WHY_ONLY_API
        if isinstance(node, ast.While):
            return (f"'while' loops are not allowed: use 'for x in [...]' or 'for i in range(n)' "
                    f"with n <= {api.MAX_LOOP_LENGTH}")
        if isinstance(node, ast.ClassDef):
            return "defining classes is not allowed: write the steps at top level"
        if isinstance(node, ast.AugAssign | ast.AnnAssign):
            return "only plain assignments 'name = InteractionObject(...)' are allowed"
        if isinstance(node, ast.Return):
            return "'return' is not allowed: there are no functions; write the steps at top level"
        if isinstance(node, ast.Break | ast.Continue):
            return "loops run their whole list; 'break' and 'continue' are not allowed"
        if isinstance(node, ast.AsyncFor):
            return "async loops are not allowed"
        kind = type(node).__name__.lower()
        return f"'{kind}' statements are not allowed: {_WHY_ONLY_API}"

    def is_main_guard(self, node: ast.If) -> bool:
        t = node.test
        return (
            isinstance(t, ast.Compare)
            and isinstance(t.left, ast.Name)
            and t.left.id == "__name__"
            and len(t.comparators) == 1
            and isinstance(t.comparators[0], ast.Constant)
            and t.comparators[0].value == "__main__"
        )

    # -- statements -----------------------------------------------------------------------------

    def expr_statement(self, node: ast.Expr) -> None:
        v = node.value
        if isinstance(v, ast.Constant) and (isinstance(v.value, str) or v.value is Ellipsis):
            return  # docstring / comment-like string / ...
        if isinstance(v, ast.Call):
            self.call_statement(v)
            return
        if isinstance(v, ast.Attribute) and isinstance(v.value, ast.Name) and v.attr in api.OBJECT_METHODS:
            raise self.error(v, f"does nothing: call the method with parentheses, {self.snippet(v)}()")
        if isinstance(v, ast.Name):
            self.check_name(v)
            raise self.error(v, "does nothing on its own: call an API method")
        raise self.not_allowed(v, self.why_expression(v))

    def why_expression(self, node: ast.expr) -> str:
        if isinstance(node, ast.Lambda):
            return "lambdas are not allowed: write each call as its own statement"
        if isinstance(node, ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp):
            return "comprehensions are not allowed: write a for loop"
        if isinstance(node, ast.JoinedStr):
            return "f-strings with expressions are not allowed: use a plain string or a loop variable"
        if isinstance(node, ast.Attribute):
            return "reading attributes is not allowed: only call the API methods"
        if isinstance(node, ast.Subscript):
            return "indexing is not allowed: give each object its own name, or make them in a for loop"
        if isinstance(node, ast.NamedExpr):
            return "':=' is not allowed: write name = InteractionObject(...) on its own line"
        if isinstance(node, ast.Starred):
            return "starred arguments are not allowed: pass each argument as it is, e.g. InteractionObject(\"Mug\")"
        if isinstance(node, ast.Await | ast.Yield | ast.YieldFrom):
            return "await/yield are not allowed"
        if isinstance(node, ast.BinOp | ast.UnaryOp | ast.BoolOp | ast.Compare | ast.IfExp):
            return "computing values is not allowed: write literal values"
        return _WHY_ONLY_API

    def check_name(self, node: ast.Name) -> None:
        if node.id.startswith("__"):
            raise self.not_allowed(node, _WHY_NO_DUNDER)

    def assign(self, node: ast.Assign) -> None:
        if len(node.targets) != 1:
            raise self.not_allowed(node, "assign one object per line: name = InteractionObject(...)")
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            if isinstance(target, ast.Tuple | ast.List):
                raise self.not_allowed(node, "assign one object per line: name = InteractionObject(...)")
            if isinstance(target, ast.Attribute):
                raise self.not_allowed(target, "setting attributes is not allowed; pass object_class, "
                                       "landmark and attributes to InteractionObject(...)")
            raise self.not_allowed(target, "only simple names can be assigned")
        self.check_name(target)
        self.check_rebind(target)
        value = node.value
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            if value.func.id == api.OBJECT_CONSTRUCTOR:
                self.env[target.id] = self.construct(value, variable=target.id)
                return
            if value.func.id == api.AGENT_CONSTRUCTOR:
                self.env[target.id] = self.agent(value)
                return
        if isinstance(value, ast.Name):
            self.check_name(value)
            bound = self.env.get(value.id)
            if isinstance(bound, _Obj | _Agent):
                self.env[target.id] = bound
                return
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
            raise self.not_allowed(value, "API methods return nothing; call them on their own line")
        if isinstance(value, ast.Constant | ast.List | ast.Tuple | ast.Dict | ast.Set):
            raise self.not_allowed(
                node, "names may only hold objects: name = InteractionObject(\"Class\"); put the text "
                "directly in the call or loop over a list"
            )
        if isinstance(value, ast.Call):
            self.call_name_check(value)
        why = self.why_expression(value)
        if why == _WHY_ONLY_API:
            why = "a name may only be bound to InteractionObject(...), AgentCorrective() or another object"
        raise self.not_allowed(node, why)

    def check_rebind(self, target: ast.Name) -> None:
        if target.id in _RESERVED:
            raise self.not_allowed(target, f"'{target.id}' is an API name and cannot be reassigned; choose "
                                   f"another name")

    def for_loop(self, node: ast.For) -> None:
        if node.orelse:
            raise self.not_allowed(node.orelse[0], "'for ... else' is not allowed")
        if not isinstance(node.target, ast.Name):
            raise self.not_allowed(node.target, "the loop variable must be a single name")
        self.check_name(node.target)
        self.check_rebind(node.target)
        items = self.loop_items(node.iter)
        name = node.target.id
        if not items or self.dry:
            saved = dict(self.env)
            self.env[name] = _Value(items[0] if items else "Object")
            self.dry += 1
            try:
                self.block(node.body)
            finally:
                self.dry -= 1
            if not items:
                self.env = saved
                return
            # dry-checked inside an outer dry run: keep the bindings for the outer check
            return
        for item in items:
            self.iterations += 1
            if self.iterations > api.MAX_LOOP_ITERATIONS:
                raise self.error(
                    node, f"this loop repeats too often: loops may run their bodies at most "
                    f"{api.MAX_LOOP_ITERATIONS} times in total; make the loops shorter", quote=False, kind=LimitError
                )
            self.env[name] = _Value(item)
            self.block(node.body)

    def loop_items(self, it: ast.expr) -> list[str | int | float]:
        limit = api.MAX_LOOP_LENGTH
        if isinstance(it, ast.List | ast.Tuple):
            if len(it.elts) > limit:
                raise self.error(it, f"has {len(it.elts)} items; a loop may repeat at most {limit} times: "
                                 f"split it into loops of at most {limit} items")
            out: list[str | int | float] = []
            for e in it.elts:
                v = self.literal(e)
                if v is None:
                    raise self.not_allowed(e, "loop lists may only hold strings or numbers")
                out.append(v)
            return out
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range":
            if it.keywords or not 1 <= len(it.args) <= 3:
                raise self.error(it, "is not allowed: use range(n) or range(start, stop[, step])")
            nums = []
            for a in it.args:
                v = self.literal(a)
                if not isinstance(v, int) or isinstance(v, bool):
                    raise self.not_allowed(a, f"range() takes integer literals only: write range(n) with "
                                           f"n <= {limit}, e.g. range(3)")
                nums.append(v)
            if len(nums) == 3 and nums[2] == 0:
                raise self.error(it, "is not allowed: the step of range() cannot be 0")
            start, stop, step = (0, nums[0], 1) if len(nums) == 1 else (nums[0], nums[1], nums[2] if len(nums) == 3 else 1)
            length = _range_length(start, stop, step)
            if length > limit:
                times = f"{length} times" if length < 10**12 else "far too often"
                raise self.error(it, f"repeats {times}; a loop may repeat at most {limit} times: write "
                                 f"range(n) with n <= {limit}")
            return list(range(start, stop, step))
        if isinstance(it, ast.Name):
            self.check_name(it)
            raise self.not_allowed(it, "loop over a literal list like [\"Mug\", \"Cup\"] or range(n)")
        raise self.not_allowed(it, "loop over a literal list like [\"Mug\", \"Cup\"] or range(n)")

    def literal(self, e: ast.expr) -> str | int | float | None:
        if isinstance(e, ast.Constant) and isinstance(e.value, str | int | float) and not isinstance(e.value, bool):
            return e.value
        if (
            isinstance(e, ast.UnaryOp)
            and isinstance(e.op, ast.USub)
            and isinstance(e.operand, ast.Constant)
            and isinstance(e.operand.value, int | float)
            and not isinstance(e.operand.value, bool)
        ):
            return -e.operand.value
        if isinstance(e, ast.JoinedStr):
            return self.plain_fstring(e)
        return None

    def plain_fstring(self, e: ast.JoinedStr) -> str:
        parts = []
        for v in e.values:
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                parts.append(v.value)
            else:
                raise self.not_allowed(e, "f-strings with expressions are not allowed: use a plain "
                                       "string or a loop variable")
        return "".join(parts)

    # -- calls ----------------------------------------------------------------------------------

    def call_statement(self, call: ast.Call) -> None:
        func = call.func
        if isinstance(func, ast.Name):
            self.check_name(func)
            name = func.id
            if name == api.OBJECT_CONSTRUCTOR:
                self.construct(call)
                return
            if name == api.AGENT_CONSTRUCTOR:
                self.agent(call)
                return
            if name in api.AGENT_METHODS:
                self.no_arguments(call, name)
                self.record(Action(name, None, None, call.lineno, self.column(call) or 0), call)
                return
            if name == "print":
                raise self.not_allowed(call, "print() is not part of the API: the program cannot show "
                                       "text; write a # comment instead")
            self.call_name_check(call)
            raise self.not_allowed(call)
        if isinstance(func, ast.Attribute):
            self.method_call(call, func)
            return
        if isinstance(func, ast.Call):
            self.call_name_check(func)
        why = self.why_expression(func)
        raise self.not_allowed(call, "only API functions and methods can be called" if why == _WHY_ONLY_API else why)

    def call_name_check(self, call: ast.Call) -> None:
        func = call.func
        if not isinstance(func, ast.Name):
            return
        name = func.id
        if name.startswith("__"):
            raise self.not_allowed(call, _WHY_NO_DUNDER)
        if name in _FORBIDDEN_CALLS:
            raise self.not_allowed(call, f"'{name}' is not part of the API; {_WHY_ONLY_API}")
        bound = self.env.get(name)
        if isinstance(bound, _Obj | _Agent):
            raise self.error(call, f"is not allowed: '{name}' is an object, not a function; call a "
                             f"method such as {name}.pickup()")
        if name in api.OBJECT_METHODS:
            raise self.error(call, f"is not allowed: '{name}' is a method; call it on an object, "
                             f"e.g. obj.{name}()")
        close = difflib.get_close_matches(name, [api.OBJECT_CONSTRUCTOR, api.AGENT_CONSTRUCTOR,
                                                 *api.AGENT_METHODS], n=1, cutoff=0.75)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise self.error(call, f"is not allowed: '{name}' is not part of the API{hint}; {_WHY_ONLY_API}")

    def no_arguments(self, call: ast.Call, name: str) -> None:
        self.check_starred(call)
        if call.args or call.keywords:
            n = len(call.args) + len(call.keywords)
            raise self.error(call, f"is not allowed: {name}() takes no arguments ({n} given)")

    def check_starred(self, call: ast.Call) -> None:
        for a in call.args:
            if isinstance(a, ast.Starred):
                raise self.not_allowed(a, "starred arguments are not allowed: pass each argument as it is, "
                                       "e.g. InteractionObject(\"Mug\")")
        for k in call.keywords:
            if k.arg is None:
                raise self.not_allowed(k.value, "'**' arguments are not allowed: write keywords out, e.g. "
                                       "landmark=\"CounterTop\"")

    def method_call(self, call: ast.Call, func: ast.Attribute) -> None:
        method = func.attr
        if method.startswith("__"):
            raise self.not_allowed(func, _WHY_NO_DUNDER)
        owner = func.value
        if isinstance(owner, ast.Name):
            self.check_name(owner)
            bound = self.env.get(owner.id)
            if bound is None:
                if owner.id in _RESERVED:
                    raise self.not_allowed(func, f"'{owner.id}' has no methods")
                raise self.semantic(
                    call, f"is not allowed: '{owner.id}' is not defined yet; create it first with "
                    f"{owner.id} = InteractionObject(\"...\"){self.defined_hint(owner.id)}"
                )
            if isinstance(bound, _Value):
                raise self.semantic(
                    call, f"is not allowed: '{owner.id}' holds the text {bound.value!r}, not an object; "
                    f"create one with InteractionObject({owner.id})"
                )
        elif isinstance(owner, ast.Call) and isinstance(owner.func, ast.Name) and owner.func.id in (
            api.OBJECT_CONSTRUCTOR,
            api.AGENT_CONSTRUCTOR,
        ):
            bound = None  # constructed below, after the method name is known to be valid
        elif isinstance(owner, ast.Attribute):
            raise self.not_allowed(call, "attribute chains are not allowed: call a method directly "
                                   "on an object name, e.g. mug.pickup()")
        else:
            why = self.why_expression(owner)
            raise self.not_allowed(
                call, "methods may only be called on object names" if why == _WHY_ONLY_API else why
            )

        is_agent_owner = isinstance(bound, _Agent) or (
            bound is None and isinstance(owner, ast.Call) and owner.func.id == api.AGENT_CONSTRUCTOR
        )
        if is_agent_owner:
            if method not in api.AGENT_METHODS:
                raise self.semantic(call, f"is not allowed: AgentCorrective has only the methods "
                                    f"{api.agent_method_list()}")
            if bound is None:
                self.agent(owner)  # type: ignore[arg-type]
            self.no_arguments(call, method)
            self.record(Action(method, None, None, call.lineno, self.column(call) or 0), call)
            return

        if method not in api.OBJECT_METHODS:
            if method in api.AGENT_METHODS:
                raise self.semantic(call, f"is not allowed: '{method}' is an agent move: call it as "
                                 f"{method}() on its own")
            close = difflib.get_close_matches(method, list(api.OBJECT_METHODS), n=1, cutoff=0.6)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise self.error(call, f"is not allowed: '{method}' is not an InteractionObject method"
                             f"{hint}; methods: {api.method_list()}")
        spec = api.OBJECT_METHODS[method]
        self.check_starred(call)
        arg_node: ast.expr | None = None
        if spec.param is None:
            if call.args or call.keywords:
                n = len(call.args) + len(call.keywords)
                raise self.error(call, f"is not allowed: {method}() takes no arguments ({n} given)")
        else:
            given = len(call.args) + len(call.keywords)
            if given != 1:
                raise self.error(call, f"is not allowed: {method}() takes exactly one argument, the "
                                 f"{spec.param} object ({given} given)")
            if call.keywords:
                kw = call.keywords[0]
                if kw.arg != spec.param:
                    raise self.error(call, f"is not allowed: {method}() has no parameter '{kw.arg}'; "
                                     f"pass the {spec.param} object, e.g. {method}({spec.param})")
                arg_node = kw.value
            else:
                arg_node = call.args[0]

        if bound is None:
            bound = self.construct(owner)  # type: ignore[arg-type]
        assert isinstance(bound, _Obj)
        arg_index = None
        if arg_node is not None:
            arg_index = self.object_argument(arg_node, method, spec.param or "").index
        self.record(Action(method, bound.index, arg_index, call.lineno, self.column(call) or 0), call)

    def object_argument(self, node: ast.expr, method: str, param: str) -> _Obj:
        if isinstance(node, ast.Name):
            self.check_name(node)
            bound = self.env.get(node.id)
            if isinstance(bound, _Obj):
                return bound
            if isinstance(bound, _Value) and isinstance(bound.value, str):
                return self.new_object(node, str(bound.value), None, (), None, note_plain=True)
            if bound is None:
                raise self.semantic(node, f"is not defined yet: create it first with {node.id} = "
                                    f"InteractionObject(\"...\"){self.defined_hint(node.id)}")
            raise self.semantic(node, f"is not allowed as the {param} of {method}(): it must be an object, "
                                "not an AgentCorrective() or a number")
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == api.OBJECT_CONSTRUCTOR:
            return self.construct(node)
        value = self.literal(node)
        if isinstance(value, str):
            return self.new_object(node, value, None, (), None, note_plain=True)
        raise self.not_allowed(node, f"the {param} of {method}() must be an object name or "
                               f"InteractionObject(...)")

    def defined_hint(self, name: str) -> str:
        """" (did you mean 'mug'?)" when a defined name is close to `name`, else ""."""
        close = difflib.get_close_matches(name, [n for n, b in self.env.items() if not isinstance(b, _Value)],
                                          n=1, cutoff=0.75)
        return f" (did you mean '{close[0]}'?)" if close else ""

    def agent(self, call: ast.Call) -> _Agent:
        self.no_arguments(call, api.AGENT_CONSTRUCTOR)
        return _Agent()

    def construct(self, call: ast.Call, variable: str | None = None) -> _Obj:
        self.check_starred(call)
        params = api.CONSTRUCTOR_PARAMS
        if len(call.args) > len(params):
            raise self.error(call, f"is not allowed: InteractionObject() takes at most {len(params)} "
                             f"arguments ({', '.join(params)}); {len(call.args)} given")
        given: dict[str, ast.expr] = dict(zip(params, call.args, strict=False))
        for kw in call.keywords:
            assert kw.arg is not None
            if kw.arg not in params:
                raise self.error(call, f"is not allowed: InteractionObject() has no parameter "
                                 f"'{kw.arg}'; parameters: {', '.join(params)}")
            if kw.arg in given:
                raise self.error(call, f"is not allowed: '{kw.arg}' is given twice; give it once")
            given[kw.arg] = kw.value
        if "object_class" not in given:
            raise self.error(call, "is not allowed: InteractionObject() needs the object class, "
                             "e.g. InteractionObject(\"Mug\")")
        object_class = self.class_text(given["object_class"], "object_class")
        landmark = None
        if "landmark" in given:
            landmark = self.landmark(given["landmark"])
        attributes: tuple[str, ...] = ()
        if "attributes" in given:
            attributes = self.attributes(given["attributes"])
        return self.new_object(call, object_class, landmark, attributes, variable)

    def new_object(
        self,
        node: ast.AST,
        object_class: str,
        landmark: str | None,
        attributes: tuple[str, ...],
        variable: str | None,
        *,
        note_plain: bool = False,
    ) -> _Obj:
        if not CLASS_NAME.match(object_class):
            raise self.error(node, f"is not allowed: {object_class!r} is not an object class name "
                             f"(use an AI2-THOR type such as \"Mug\")")
        if self.dry:
            return _Obj(-1)
        if len(self.objects) >= api.MAX_OBJECTS:
            raise self.error(node, f"creates too many objects (more than {api.MAX_OBJECTS}); make the "
                             "loops shorter", quote=False, kind=LimitError)
        line = getattr(node, "lineno", 0)
        decl = ObjectDecl(len(self.objects), object_class, landmark, attributes, line, variable)
        self.objects.append(decl)
        self.steps.append(decl)
        if note_plain:
            self.notes.append(f"line {line}: treated {object_class!r} as InteractionObject({object_class!r})")
        return _Obj(decl.index)

    def text_value(self, node: ast.expr) -> str | int | float | None:
        if isinstance(node, ast.Name):
            self.check_name(node)
            bound = self.env.get(node.id)
            if isinstance(bound, _Value):
                return bound.value
            if isinstance(bound, _Obj | _Agent):
                return None
            raise self.semantic(node, f"is not defined yet: only a loop variable such as x in "
                                f"'for x in [\"Mug\", \"Cup\"]:' can stand for a class name here"
                                f"{self.defined_hint(node.id)}")
        return self.literal(node)

    def class_text(self, node: ast.expr, param: str) -> str:
        value = self.text_value(node)
        if not isinstance(value, str):
            if isinstance(node, ast.Name):
                raise self.semantic(node, f"is not allowed as the {param}: it holds an object or a number; "
                                    f"write a class name in quotes, e.g. \"Mug\"")
            raise self.not_allowed(node, f"{param} must be a class name in quotes, e.g. \"Mug\", or a "
                                   f"loop variable holding one")
        return value.strip()

    def landmark(self, node: ast.expr) -> str | None:
        if isinstance(node, ast.Constant) and node.value is None:
            return None
        if isinstance(node, ast.Name) and isinstance(self.env.get(node.id), _Obj):
            idx = self.env[node.id].index  # type: ignore[union-attr]
            return self.objects[idx].object_class if idx >= 0 else "Object"
        text = self.class_text(node, "landmark")
        if not CLASS_NAME.match(text):
            raise self.error(node, f"is not allowed: {text!r} is not an object class name")
        return text

    def attributes(self, node: ast.expr) -> tuple[str, ...]:
        if isinstance(node, ast.List | ast.Tuple):
            elts = node.elts
        elif isinstance(node, ast.Constant) and node.value is None:
            elts = []
        else:
            elts = [node]
        if len(elts) > len(api.ATTRIBUTE_METHODS) * 2:
            raise self.not_allowed(node, "too many attributes")
        out: list[str] = []
        for e in elts:
            value = self.text_value(e)
            if not isinstance(value, str):
                raise self.not_allowed(e, "attributes must be strings such as \"clean\"")
            canon = api.normalise_attribute(value)
            if canon is None:
                raise self.error(e, f"is not a known attribute; use any of: "
                                 f"{', '.join(api.ATTRIBUTE_METHODS)}")
            if canon not in out:
                out.append(canon)
        return tuple(out)

    def record(self, action: Action, node: ast.AST) -> None:
        if self.dry:
            return
        self.n_actions += 1
        if self.n_actions > api.MAX_ACTIONS:
            raise self.error(node, f"is one action too many: a program may perform at most "
                             f"{api.MAX_ACTIONS} actions", kind=LimitError)
        self.steps.append(action)


