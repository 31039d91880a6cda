"""Program decoding under a grammar that knows what the program has defined so far.

A context-free grammar of the whole program (`program.grammar`) guarantees a program that parses,
but not one that makes sense: small models write `pot.pickup_and_place(pot)`, call objects they
never created (`pan.toggle_on()`), and pick up a CoffeeMachine. So the in-process model writes the
program one line at a time, each line under a small GBNF grammar generated from the action API,
the object catalog's affordances and the names defined on the lines before:

* a new object: `name = InteractionObject("Class"[, landmark="Class"][, attributes=[...]])`;
* a method call on a defined name, among the methods its class affords, with an argument among the
  other defined names that can take it (never the object itself);
* a bounded `for i in range(n):` loop whose body is indented;
* one leading comment (the plan in words, as the examples show), and the closing fence.

The lines reuse the KV cache (each call's prompt is the previous one plus the new line), so a line
costs the tokens it writes. At most `max_lines` lines are written; a block of lines repeated three
times in a row ends the program (a small model's loop). The result is a program in the documented
language in which every call names a defined object that affords it; `compile_program` still
validates it.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from helper_agent.program import api
from helper_agent.program.classes import LexicalClassMapper
from helper_agent.program.grammar import default_class_names
from helper_agent.program.semantics import accepts, affords
from helper_agent.world.catalog import load_catalog

FENCE_OPEN = "```python\n"
FENCE_CLOSE = "```"
INDENT = "    "
MAX_COMMENT_CHARS = 100
MAX_NAME_CHARS = 24
MAX_LINE_TOKENS = 72
REPEATS_TO_STOP = 3

_DECL = re.compile(r'^(?P<indent>\s*)(?P<name>[a-z][a-z0-9_]*) = InteractionObject\("(?P<cls>[A-Za-z]+)"')
_FOR = re.compile(r"^for i in range\(\d+\):$")
_CALL = re.compile(r"^(?P<name>[a-z][a-z0-9_]*)\.(?P<method>[a-z_]+)\(")


def _lit(text: str) -> str:
    """A GBNF string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _alt(options: Sequence[str]) -> str:
    return "(" + " | ".join(options) + ")" if len(options) > 1 else options[0]


def _trie(words: Sequence[str]) -> str:
    """One GBNF expression for a set of literal words, factored by common prefixes.

    llama.cpp checks every candidate token against every live alternative of the grammar; 130 class
    names as a flat alternation keep 130 alternatives alive at the first letter, a prefix tree about
    twenty, and a constrained line costs far less to sample."""
    words = sorted(set(words))
    if not words:
        raise ValueError("no words")
    if len(words) == 1:
        return _lit(words[0])
    branches: dict[str, list[str]] = {}
    for word in words:
        branches.setdefault(word[:1], []).append(word)
    options = []
    for head, group in branches.items():
        if not head:  # the empty word: the prefix itself is a word
            continue
        prefix = group[0]
        for word in group[1:]:
            while not word.startswith(prefix):
                prefix = prefix[:-1]
        rests = [w[len(prefix):] for w in group]
        if len(group) == 1:
            options.append(_lit(group[0]))
            continue
        ends_here = "" in rests
        inner = _trie([r for r in rests if r])
        options.append(f"{_lit(prefix)} {inner}?" if ends_here else f"{_lit(prefix)} {inner}")
    if "" in branches:
        return f"({_alt(options)})?"
    return _alt(options) if len(options) > 1 else f"({options[0]})"


@dataclass
class DecodeState:
    """What the lines so far have defined: names and their resolved classes, and the loop."""

    names: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)
    loop_open: bool = False  # the last line is a `for` header: the next must be its body
    in_loop: bool = False  # the last line is in a loop body: the next may continue it
    actions: int = 0
    held: str | None = None  # the name picked up and not yet placed, as far as the lines say
    last_call: str | None = None  # the previous line's call, which the next line may not repeat

    def add(self, line: str, resolve: Callable[[str], str]) -> None:
        body = line[len(INDENT):] if line.startswith(INDENT) else line
        self.in_loop = line.startswith(INDENT) or bool(_FOR.match(line))
        self.loop_open = bool(_FOR.match(line))
        match = _DECL.match(body)
        call = _CALL.match(body)
        if match:
            self.names[match.group("name")] = resolve(match.group("cls"))
        elif call:
            self.actions += 1
            name, method = call.group("name"), call.group("method")
            if method == "pickup":
                self.held = name
            elif method in ("place", "put_down", "pickup_and_place") or api.OBJECT_METHODS[method].macro:
                self.held = None  # placed, or a macro that leaves the hands as it likes (as the compiler says)
        self.last_call = body if call else None
        self.lines.append(line)

    def repeating(self) -> bool:
        """Whether the last lines are one block written `REPEATS_TO_STOP` times in a row."""
        return self.repeated_block() > 0

    def repeated_block(self) -> int:
        """The size of the block the last lines repeat `REPEATS_TO_STOP` times in a row (0: none)."""
        lines = self.lines
        for size in range(1, 5):
            span = size * REPEATS_TO_STOP
            if len(lines) >= span:
                block = lines[-size:]
                if all(lines[-span + k * size: len(lines) - span + (k + 1) * size] == block for k in range(REPEATS_TO_STOP)):
                    return size
        return 0

    def drop_repeats(self) -> list[str]:
        """Keep one copy of a block the lines repeat (a loop of a small model, not a plan); returns
        the lines kept."""
        size = self.repeated_block()
        if size:
            del self.lines[len(self.lines) - size * (REPEATS_TO_STOP - 1):]
        return self.lines


def line_grammar(state: DecodeState, *, max_lines: int, allow_agent_moves: bool = False) -> str:
    """The GBNF grammar of the next line (or of the closing fence) given what is defined so far."""
    rules: dict[str, str] = {}
    statements = ["decl"]
    # A declaration is one line in one call: after its class come only the keywords that class
    # takes (`_declaration_rules`), so the model writes `"Pot")` with its own tokens (a grammar that
    # stopped at the closing quote made it split `")` and drift to "PotatoSliced").
    rules.update(_declaration_rules())
    rules["name"] = f"[a-z] [a-z0-9_]{{0,{MAX_NAME_CHARS - 1}}}"
    calls = []
    for n, (name, cls) in enumerate(sorted(state.names.items())):
        methods = []
        for method, spec in api.OBJECT_METHODS.items():
            if not affords(method, cls):
                continue
            if method == "pickup" and state.held == name or method == "put_down" and state.held != name:
                continue  # picking up what is held, putting down what is not
            if spec.param is None:
                if state.last_call != f"{name}.{method}()":  # the same call twice in a row
                    methods.append(_lit(f"{method}()"))
                continue
            targets = [_lit(other) for other, other_cls in sorted(state.names.items())
                       if other != name and accepts(method, cls, other_cls)
                       and state.last_call != f"{name}.{method}({other})"]
            if targets:
                methods.append(f'{_lit(method + "(")} {_alt(targets)} ")"')
        if methods:
            rules[f"call{n}"] = f"{_lit(name + '.')} {_alt(methods)}"
            calls.append(f"call{n}")
    statements += calls
    if allow_agent_moves:
        rules["move"] = _alt([_lit(f"{m}()") for m in api.AGENT_METHODS])
        statements.append("move")
    rules["loop"] = f'"for i in range(" ([1-9] | "1" [0-9] | "{api.MAX_LOOP_LENGTH}") "):"'
    # A declaration's line ends in its keywords and ")\\n" (`_declaration_rules`), a call's here.
    rules["stmt"] = _alt(["decl", *(f'{call} "\\n"' for call in statements[1:])])
    lines: list[str] = []
    if state.loop_open:
        lines.append(f'{_lit(INDENT)} stmt')
    else:
        if state.in_loop:
            lines.append(f'{_lit(INDENT)} stmt')
        if len(state.lines) < max_lines:
            lines.append('stmt')
            if len(state.lines) < max_lines - 1:
                lines.append('loop "\\n"')
            if not state.lines:
                rules["comment"] = f'"# " [^\\n]{{1,{MAX_COMMENT_CHARS}}}'
                lines.append('comment "\\n"')
        if state.actions or len(state.lines) >= max_lines:
            lines.append(_lit(FENCE_CLOSE))
    rules["root"] = _alt(lines)
    return "\n".join(f"{name} ::= {body}" for name, body in [("root", rules.pop("root")), *rules.items()])


def _attributes_of(cls: str) -> tuple[str, ...]:
    """The attributes (end states) an object of class `cls` can be given: each stands for a method
    the class must afford."""
    return tuple(a for a, method in api.ATTRIBUTE_METHODS.items() if affords(method, cls))


def decl_tail_grammar(cls: str) -> str:
    """The rest of `name = InteractionObject("Cls"`: an optional landmark, the attributes an object
    of class `cls` can be given, the parenthesis (one class's part of `_declaration_rules`)."""
    attributes = _attributes_of(cls)
    rules = {
        "root": 'landmark? attributes? ")\\n"' if attributes else 'landmark? ")\\n"',
        "landmark": f'", landmark=\\"" {_class_names()} "\\""',
    }
    if attributes:
        rules["attributes"] = '", attributes=[" attr (", " attr)* "]"'
        rules["attr"] = _alt([_lit(f'"{a}"') for a in attributes])
    return "\n".join(f"{name} ::= {body}" for name, body in rules.items())


@functools.lru_cache(maxsize=1)
def _declaration_rules() -> dict[str, str]:
    """GBNF rules of a whole declaration line: the catalog's classes grouped by the attributes
    they take, each group followed by an optional landmark and only its own attributes."""
    groups: dict[tuple[str, ...], list[str]] = {}
    for cls in default_class_names():
        groups.setdefault(_attributes_of(cls), []).append(cls)
    rules = {"decl": 'name " = InteractionObject(\\"" declbody',
             "landmark": f'", landmark=\\"" {_class_names()} "\\""'}
    bodies = []
    for n, (attributes, classes) in enumerate(sorted(groups.items())):
        names = _trie(classes)
        if attributes:
            rules[f"attr{n}"] = _alt([_lit(f'"{a}"') for a in attributes])
            rules[f"decl{n}"] = (f'{names} "\\"" landmark? (", attributes=[" attr{n} (", " attr{n})* "]")? '
                                 f'")\\n"')
        else:
            rules[f"decl{n}"] = f'{names} "\\"" landmark? ")\\n"'
        bodies.append(f"decl{n}")
    rules["declbody"] = _alt(bodies)
    return rules




@dataclass
class DecodeResult:
    text: str
    prompt_tokens: int
    completion_tokens: int
    prompt_tokens_evaluated: int | None
    seconds: float
    line_calls: int
    stopped_by: str  # "fence", "max_lines", "repetition", "no_line"
    # what a person waits for (issue 64): seconds from the call until the first line was written, and
    # until the first line that acts (a subgoal: `target.pickup()`); None when there was none
    first_line_seconds: float | None = None
    first_action_seconds: float | None = None


class ServedLineClient:
    """The two calls `ProgramDecoder` makes (`tokenize`, `create_completion`), answered by an
    OpenAI-compatible server's completions endpoint, so a served model writes programs line by line
    under the same grammars as the in-process one.

    Why: a whole-program grammar cannot know which names a program has defined, and with it the
    served 0.5B wrote programs that use objects they never created (3 of 10 episodes ended
    `invalid_program` where the in-process model, decoding line by line, finished them). Each line
    is one completion request whose grammar travels in `grammar_field` (llama.cpp's `grammar`,
    vLLM's `guided_grammar`); the server keeps the shared prompt prefix in its KV cache between
    lines. The prompt is built client-side with the chat template and tokenizer of `vocab`, a
    vocabulary-only `llama_cpp.Llama` of the GGUF file the server serves.
    """

    grammar_as_text = True  # the grammar goes over the wire as GBNF text, not a compiled LlamaGrammar

    def __init__(self, completions: Any, model: str, grammar_field: str, vocab: Any) -> None:
        self.completions = completions
        self.model = model
        self.grammar_field = grammar_field
        self.vocab = vocab

    def tokenize(self, text: bytes, add_bos: bool = False, special: bool = True) -> list[int]:
        return self.vocab.tokenize(text, add_bos=add_bos, special=special)

    def create_completion(self, prompt: str, *, max_tokens: int, temperature: float, seed: int,
                          grammar: str, stop: list[str] | None = None) -> dict[str, Any]:
        reply = self.completions.create(model=self.model, prompt=prompt, max_tokens=max_tokens,
                                        temperature=temperature, seed=seed, stop=stop or None,
                                        extra_body={self.grammar_field: grammar})
        if not getattr(reply, "choices", None):
            raise ValueError("the completion has no choices")
        usage = getattr(reply, "usage", None)
        return {"choices": [{"text": reply.choices[0].text or ""}],
                "usage": {"completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0)}}


class ProgramDecoder:
    """Writes a program line by line under `line_grammar`, with a llama-cpp-python `Llama` or a
    `ServedLineClient`."""

    def __init__(self, client: Any, *, max_lines: int = 40, agent_moves: bool = False,
                 class_mapper: Callable[[str], tuple[str, float]] | None = None) -> None:
        self.client = client
        self.max_lines = max_lines
        self.agent_moves = agent_moves
        self.mapper = class_mapper or _lexical_mapper()

    def resolve(self, cls: str) -> str:
        return self.mapper(cls)[0]

    def decode(self, prompt: str, *, temperature: float = 0.0, seed: int = 0,
               evaluated: Callable[[], int | None] | None = None) -> DecodeResult:
        started = time.perf_counter()
        state = DecodeState()
        text = FENCE_OPEN
        completion = calls = 0
        first_line: float | None = None
        first_action: float | None = None
        before = evaluated() if evaluated else None
        prompt_tokens = len(self.client.tokenize((prompt + FENCE_OPEN).encode("utf-8"), add_bos=False, special=True))
        stopped_by = "max_lines"
        while True:
            rules = line_grammar(state, max_lines=self.max_lines, allow_agent_moves=self.agent_moves)
            grammar = rules if getattr(self.client, "grammar_as_text", False) else _compiled(rules)
            out = self.client.create_completion(prompt + text, max_tokens=MAX_LINE_TOKENS, temperature=temperature,
                                                seed=seed + calls, grammar=grammar, stop=[])
            calls += 1
            completion += int((out.get("usage") or {}).get("completion_tokens", 0))
            piece = out["choices"][0]["text"]
            if piece.startswith(FENCE_CLOSE):
                text += FENCE_CLOSE
                stopped_by = "fence" if state.actions else "max_lines"
                break
            if not piece.endswith("\n"):  # the line did not finish within its token bound
                stopped_by = "no_line"
                text += FENCE_CLOSE
                break
            line = piece[:-1]
            state.add(line, self.resolve)
            text += piece
            now = time.perf_counter() - started
            first_line = now if first_line is None else first_line
            first_action = now if first_action is None and state.actions else first_action
            if state.repeating():
                stopped_by = "repetition"
                text = FENCE_OPEN + "".join(line + "\n" for line in state.drop_repeats()) + FENCE_CLOSE
                break
            if len(state.lines) >= self.max_lines and not state.loop_open:
                text += FENCE_CLOSE
                break
        after = evaluated() if evaluated else None
        prompt_evaluated = None
        if before is not None and after is not None:
            # What llama.cpp evaluated beyond the tokens this decoding wrote itself.
            prompt_evaluated = max(after - before - completion, 0)
        return DecodeResult(text, prompt_tokens, completion, prompt_evaluated, time.perf_counter() - started, calls, stopped_by,
                            first_line, first_action)


def _compiled(rules: str) -> Any:
    from llama_cpp import LlamaGrammar  # deferred: the in-process model's optional extra

    return LlamaGrammar.from_string(rules, verbose=False)


@functools.lru_cache(maxsize=1)
def _class_names() -> str:
    """The catalog's object classes as one GBNF alternation: a class is a name the world knows, not
    any capitalised word (the 0.5B model wrote "PotatoSlicedSlicedSliced..." to the length cap)."""
    return _trie(default_class_names())


@functools.lru_cache(maxsize=1)
def _lexical_mapper() -> LexicalClassMapper:
    return LexicalClassMapper(sorted(load_catalog().names()))


def format_chat(client: Any, messages: Sequence[Mapping[str, str]]) -> str:
    """The prompt text the model's own chat template makes of `messages`, ready for the answer."""
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    template = client.metadata.get("tokenizer.chat_template")
    if not template:
        raise ValueError("the model has no chat template: line-by-line decoding needs one")
    eos = client._model.token_get_text(client.token_eos())
    bos = client._model.token_get_text(client.token_bos()) if client.token_bos() >= 0 else ""
    formatter = Jinja2ChatFormatter(template=template, eos_token=eos, bos_token=bos, add_generation_prompt=True)
    return formatter(messages=list(messages)).prompt
