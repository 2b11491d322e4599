"""The tree's own build: the defines its CMakeLists.txt files give each source, read without running CMake.

A small reader, honest about what it does not know. It interprets the commands that decide defines, in order:
`set` (CACHE values keep a value given from outside), `unset`, `option`, `list` (APPEND, PREPEND, FIND, LENGTH,
REMOVE_ITEM), `if`/`elseif`/`else` over CMake's condition language, `foreach`, `function` and `macro` (their bodies
run when called), `add_library` / `add_executable` (and ggml's `ggml_add_backend_library`), `target_sources`,
`target_compile_definitions`, `add_compile_definitions`, `add_definitions`, `add_subdirectory` (the child inherits the
variables and directory defines) and `ExternalProject_Add` (a separate project: it starts from its `-D` CMAKE_ARGS
only, as CMake's own sub-build does). Generator expressions are evaluated where their value is known (`$<BOOL:>`,
`$<IF:>`, `$<NOT:>`, `$<AND:>`, `$<OR:>`, `$<STREQUAL:>`, `$<EQUAL:>`, `$<CONFIG:>`, `$<0:>`, `$<1:>`, `$<COMMA>` ...);
a define whose value needs anything else is left out and said so. Every other command (message, include, file,
string, install ...) is skipped: none of them gives a define. `$ENV{...}` reads as empty, so the result depends on
the tree alone. The kernel build's `DSP_VERSION` is the Hexagon version the run parses for.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field

CMAKE_LISTS = "CMakeLists.txt"
# Commands that create a target from their sources: CMake's own, and ggml's wrapper around add_library.
_TARGET_COMMANDS = frozenset({"add_library", "add_executable", "ggml_add_backend_library"})
_TARGET_KEYWORDS = frozenset({"STATIC", "SHARED", "MODULE", "OBJECT", "INTERFACE", "EXCLUDE_FROM_ALL", "IMPORTED"})
_SCOPE_KEYWORDS = frozenset({"PRIVATE", "PUBLIC", "INTERFACE", "BEFORE"})
_FALSE_CONSTANTS = frozenset({"", "0", "OFF", "NO", "FALSE", "N", "IGNORE", "NOTFOUND"})
_TRUE_CONSTANTS = frozenset({"1", "ON", "YES", "TRUE", "Y"})
# Files nested deeper than this, or commands repeated more often (a loop), stop the reader: a build file is small.
_MAX_DEPTH = 16
_MAX_STEPS = 200_000


class CMakeError(Exception):
    """A CMakeLists.txt the reader cannot read (syntax it does not know); the run goes on without its defines."""


@dataclass(frozen=True)
class Argument:
    text: str
    quoted: bool  # a quoted or bracket argument: never split on `;`, never a variable name in if()


@dataclass(frozen=True)
class Command:
    name: str  # lower case, as CMake compares command names
    arguments: tuple[Argument, ...]
    path: str
    line: int


@dataclass(frozen=True)
class Define:
    """One define the build gives a source: `name` or `name=value`, and the CMakeLists.txt line it comes from."""

    name: str
    value: str | None
    path: str
    line: int
    target: str | None = None  # None: a directory-wide add_compile_definitions / add_definitions

    @property
    def flag(self) -> str:
        """As `-D` takes it (NAME or NAME=VALUE)."""
        return self.name if self.value is None else f"{self.name}={self.value}"


@dataclass
class _Target:
    name: str
    directory: str
    sources: set[str] = field(default_factory=set)
    defines: list[Define] = field(default_factory=list)


@dataclass
class _Directory:
    """A CMakeLists.txt directory as read: its own defines (directory-wide ones inherited from the parent included)."""

    path: str
    defines: list[Define] = field(default_factory=list)
    targets: list[_Target] = field(default_factory=list)


@dataclass(frozen=True)
class BuildDefines:
    """What the tree's build files say: per directory read, the defines of its targets and its own."""

    directories: tuple[tuple[str, tuple[Define, ...], tuple[tuple[frozenset[str], tuple[Define, ...]], ...]], ...]
    files_read: tuple[str, ...]
    notes: tuple[str, ...]  # what the reader left out, and why

    def defines_for(self, path: str) -> tuple[Define, ...]:
        """The defines of the file at `path`: its directory's, plus its targets' (every target of the nearest
        directory read when no target lists the file, as for a header)."""
        real = os.path.realpath(path)
        best = None
        for entry in self.directories:
            directory = entry[0]
            if (real == directory or real.startswith(directory + os.sep)) and (
                best is None or len(directory) > len(best[0])
            ):
                best = entry
        if best is None:
            return ()
        _, own, targets = best
        listing = [defines for sources, defines in targets if real in sources]
        chosen = listing or [defines for _, defines in targets]
        result: dict[str, Define] = {define.name: define for define in own}
        for defines in chosen:
            for define in defines:
                result.setdefault(define.name, define)
        return tuple(result.values())


# ---------------------------------------------------------------- lexing

_BRACKET_OPEN = re.compile(r"\[(=*)\[")
_COMMAND_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def parse_commands(text: str, path: str) -> list[Command]:
    """The commands of a CMake file, in order (CMake's grammar: `name(arguments)`, `#` and `#[[...]]` comments,
    quoted, bracket and unquoted arguments, nested parentheses inside the arguments)."""
    commands: list[Command] = []
    position, size, line = 0, len(text), 1
    while True:
        position, line = _skip_blanks(text, position, line)
        if position >= size:
            return commands
        match = _COMMAND_NAME.match(text, position)
        if match is None:
            raise CMakeError(f"{path}:{line}: not a command: {text[position : position + 20]!r}")
        name, command_line = match.group(0).lower(), line
        position = match.end()
        while position < size and text[position] in " \t":
            position += 1
        if position >= size or text[position] != "(":
            raise CMakeError(f"{path}:{line}: `{name}` without `(`")
        arguments, position, line = _arguments(text, position + 1, line, path)
        commands.append(Command(name, tuple(arguments), path, command_line))


def _skip_blanks(text: str, position: int, line: int) -> tuple[int, int]:
    """Past whitespace, newlines (counted) and comments."""
    while position < len(text):
        character = text[position]
        if character == "\n":
            line += 1
            position += 1
        elif character in " \t\r":
            position += 1
        elif character == "#":
            position, line = _skip_comment(text, position, line)
        else:
            break
    return position, line


def _skip_comment(text: str, position: int, line: int) -> tuple[int, int]:
    bracket = _BRACKET_OPEN.match(text, position + 1)
    if bracket is not None:
        closing = "]" + bracket.group(1) + "]"
        end = text.find(closing, bracket.end())
        end = len(text) if end < 0 else end + len(closing)
        return end, line + text.count("\n", position, end)
    end = text.find("\n", position)
    return (len(text) if end < 0 else end), line


def _arguments(text: str, position: int, line: int, path: str) -> tuple[list[Argument], int, int]:
    arguments: list[Argument] = []
    depth = 0
    size = len(text)
    while True:
        position, line = _skip_blanks(text, position, line)
        if position >= size:
            break
        character = text[position]
        if character == ")":
            if depth == 0:
                return arguments, position + 1, line
            depth -= 1
            arguments.append(Argument(")", False))
            position += 1
        elif character == "(":
            depth += 1
            arguments.append(Argument("(", False))
            position += 1
        elif character == '"':
            value, position, line = _quoted(text, position + 1, line, path)
            arguments.append(Argument(value, True))
        elif (bracket := _BRACKET_OPEN.match(text, position)) is not None:
            closing = "]" + bracket.group(1) + "]"
            end = text.find(closing, bracket.end())
            if end < 0:
                raise CMakeError(f"{path}:{line}: unterminated bracket argument")
            value = text[bracket.end() : end]
            value = value[1:] if value.startswith("\n") else value
            line += text.count("\n", position, end)
            arguments.append(Argument(value, True))
            position = end + len(closing)
        else:
            value, position = _unquoted(text, position)
            arguments.append(Argument(value, False))
    raise CMakeError(f"{path}:{line}: a command's `(` is never closed")


def _quoted(text: str, position: int, line: int, path: str) -> tuple[str, int, int]:
    pieces: list[str] = []
    size = len(text)
    while position < size:
        character = text[position]
        if character == '"':
            return "".join(pieces), position + 1, line
        if character == "\\" and position + 1 < size:
            following = text[position + 1]
            if following == "\n":  # a line continuation inside a quoted argument
                line += 1
            else:
                pieces.append({"n": "\n", "t": "\t", "r": "\r", ";": "\\;"}.get(following, following))
            position += 2
            continue
        if character == "\n":
            line += 1
        pieces.append(character)
        position += 1
    raise CMakeError(f"{path}:{line}: unterminated quoted argument")


def _unquoted(text: str, position: int) -> tuple[str, int]:
    start = position
    size = len(text)
    while position < size and text[position] not in ' \t\r\n()#"':
        if text[position] == "\\" and position + 1 < size:
            position += 2
            continue
        if text.startswith("$<", position) or text.startswith("${", position):
            position = _skip_balanced(text, position + 1)  # `$<IF:a,b>` and `${x}` may hold characters that end args
            continue
        position += 1
    return text[start:position], position


def _skip_balanced(text: str, position: int) -> int:
    """From the `<` or `{` at `position`, past its matching closer (the same kind nested counts)."""
    opener = text[position]
    closer = ">" if opener == "<" else "}"
    depth = 0
    while position < len(text):
        character = text[position]
        if character == opener:
            depth += 1
        elif character == closer:
            depth -= 1
            if depth == 0:
                return position + 1
        elif character in "\n":
            return position
        position += 1
    return position


# ---------------------------------------------------------------- evaluation

_VARIABLE_REFERENCE = re.compile(r"\$(ENV|CACHE)?\{([^${}]*)\}")


def _is_true(value: str) -> bool:
    upper = value.upper()
    if upper in _TRUE_CONSTANTS:
        return True
    if upper in _FALSE_CONSTANTS or upper.endswith("-NOTFOUND"):
        return False
    try:
        return float(value) != 0
    except ValueError:
        return True


class _Reader:
    def __init__(self, overrides: Mapping[str, str]) -> None:
        self.overrides = dict(overrides)
        self.directories: list[_Directory] = []
        self.files_read: list[str] = []
        self.notes: list[str] = []
        self.functions: dict[str, tuple[str, tuple[str, ...], list[Command]]] = {}
        self.targets: dict[str, _Target] = {}
        self.steps = 0
        self.projects_read: set[str] = set()

    # -- variables

    def expand(self, text: str, scope: dict[str, str]) -> str:
        """`${VAR}` (innermost first, so `${${NAME}}` works), `$CACHE{VAR}`; `$ENV{VAR}` is empty."""
        for _ in range(100):
            expanded = _VARIABLE_REFERENCE.sub(
                lambda match: "" if match.group(1) == "ENV" else scope.get(match.group(2), ""), text
            )
            if expanded == text:
                return expanded
            text = expanded
        return text

    def values(self, arguments: Sequence[Argument], scope: dict[str, str]) -> list[str]:
        """The arguments as CMake passes them on: expanded, unquoted ones split on `;` (empty pieces dropped)."""
        result: list[str] = []
        for argument in arguments:
            value = self.expand(argument.text, scope)
            if argument.quoted:
                result.append(value)
            else:
                result.extend(piece for piece in _split_list(value) if piece != "")
        return result

    # -- files

    def read_directory(
        self, directory: str, scope: dict[str, str], parent: _Directory | None, depth: int, source_dir: str
    ) -> None:
        path = os.path.join(directory, CMAKE_LISTS)
        if depth > _MAX_DEPTH:
            self.notes.append(f"{path}: nested too deep; not read")
            return
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                text = handle.read()
        except OSError:
            return
        try:
            commands = parse_commands(text, path)
        except CMakeError as error:
            self.notes.append(f"{error}; its defines are not taken")
            return
        self.files_read.append(path)
        record = _Directory(os.path.realpath(directory), list(parent.defines) if parent is not None else [])
        self.directories.append(record)
        scope.update(
            CMAKE_CURRENT_SOURCE_DIR=directory,
            CMAKE_CURRENT_LIST_DIR=directory,
            CMAKE_CURRENT_BINARY_DIR=os.path.join(directory, "<build>"),
            CMAKE_SOURCE_DIR=source_dir,
            PROJECT_SOURCE_DIR=source_dir,
        )
        self.run(commands, scope, record, depth)

    def run(self, commands: list[Command], scope: dict[str, str], directory: _Directory, depth: int) -> None:
        index = 0
        while index < len(commands):
            self.steps += 1
            if self.steps > _MAX_STEPS:
                raise CMakeError(f"{commands[index].path}: more than {_MAX_STEPS} commands run (a loop?)")
            command = commands[index]
            if command.name == "if":
                index = self.run_if(commands, index, scope, directory, depth)
            elif command.name in ("function", "macro"):
                end = _block_end(commands, index, command.name, "end" + command.name)
                words = self.values(command.arguments, scope)
                if words:
                    self.functions[words[0].lower()] = (command.name, tuple(words[1:]), commands[index + 1 : end])
                index = end + 1
            elif command.name == "foreach":
                end = _block_end(commands, index, "foreach", "endforeach")
                self.run_foreach(command, commands[index + 1 : end], scope, directory, depth)
                index = end + 1
            elif command.name == "while":
                end = _block_end(commands, index, "while", "endwhile")
                self.notes.append(f"{command.path}:{command.line}: while() is not run; what it would set is unknown")
                index = end + 1
            else:
                self.command(command, scope, directory, depth)
                index += 1

    def run_if(
        self, commands: list[Command], index: int, scope: dict[str, str], directory: _Directory, depth: int
    ) -> int:
        """Run the branch whose condition holds; returns the index after the matching endif."""
        branches: list[tuple[Command, int]] = [(commands[index], index)]
        nesting = 0
        position = index + 1
        while position < len(commands):
            name = commands[position].name
            if name == "if":
                nesting += 1
            elif name == "endif":
                if nesting == 0:
                    break
                nesting -= 1
            elif name in ("elseif", "else") and nesting == 0:
                branches.append((commands[position], position))
            position += 1
        else:
            raise CMakeError(f"{commands[index].path}:{commands[index].line}: if() without endif()")
        bounds = [*[start for _, start in branches], position]
        for number, (head, start) in enumerate(branches):
            if head.name == "else" or self.condition(head, scope):
                self.run(commands[start + 1 : bounds[number + 1]], scope, directory, depth)
                break
        return position + 1

    def run_foreach(
        self, head: Command, body: list[Command], scope: dict[str, str], directory: _Directory, depth: int
    ) -> None:
        words = self.values(head.arguments, scope)
        if not words:
            return
        variable, items = words[0], words[1:]
        if items[:1] == ["RANGE"]:
            numbers = [int(word) for word in items[1:] if word.lstrip("-").isdigit()]
            start, stop, step = (0, numbers[0], 1) if len(numbers) == 1 else (*numbers[:2], *(numbers[2:3] or [1]))
            items = [str(value) for value in range(start, stop + 1, step or 1)]
        elif items[:1] == ["IN"]:
            expanded: list[str] = []
            mode = None
            for word in items[1:]:
                if word in ("LISTS", "ITEMS", "ZIP_LISTS"):
                    mode = word
                elif mode == "LISTS":
                    expanded += [piece for piece in _split_list(scope.get(word, "")) if piece]
                else:
                    expanded.append(word)
            items = expanded
        for item in items:
            scope[variable] = item
            self.run(body, scope, directory, depth)

    # -- commands

    def command(self, command: Command, scope: dict[str, str], directory: _Directory, depth: int) -> None:
        name = command.name
        if name in self.functions:
            self.call(command, scope, directory, depth)
            return
        if name in _TARGET_COMMANDS:
            self.new_target(command, scope, directory)
            return
        handler = getattr(self, "do_" + name, None)
        if handler is not None:
            handler(command, scope, directory, depth)

    def call(self, command: Command, scope: dict[str, str], directory: _Directory, depth: int) -> None:
        kind, parameters, body = self.functions[command.name]
        words = self.values(command.arguments, scope)
        inner = dict(scope) if kind == "function" else scope
        for number, parameter in enumerate(parameters):
            inner[parameter] = words[number] if number < len(words) else ""
        inner["ARGN"] = ";".join(words[len(parameters) :])
        inner["ARGV"] = ";".join(words)
        inner["ARGC"] = str(len(words))
        for number, word in enumerate(words):
            inner[f"ARGV{number}"] = word
        self.run(body, inner, directory, depth)
        if kind == "function":
            for key, value in list(inner.items()):
                if key.startswith("\0parent_scope:"):
                    scope[key[len("\0parent_scope:") :]] = value

    def set_variable(self, scope: dict[str, str], name: str, value: str) -> None:
        if name not in self.overrides:
            scope[name] = value

    def do_set(self, command: Command, scope: dict[str, str], directory: _Directory, depth: int) -> None:
        words = self.values(command.arguments, scope)
        if not words:
            return
        name, rest = words[0], words[1:]
        if "CACHE" in rest:
            value = ";".join(rest[: rest.index("CACHE")])
            if name not in scope or "FORCE" in rest:
                self.set_variable(scope, name, value)
        elif rest[-1:] == ["PARENT_SCOPE"]:
            scope["\0parent_scope:" + name] = ";".join(rest[:-1])
        else:
            self.set_variable(scope, name, ";".join(rest))

    def do_unset(self, command: Command, scope: dict[str, str], directory: _Directory, depth: int) -> None:
        words = self.values(command.arguments, scope)
        if words and words[0] not in self.overrides:
            scope.pop(words[0], None)

    def do_option(self, command: Command, scope: dict[str, str], directory: _Directory, depth: int) -> None:
        words = self.values(command.arguments, scope)
        if words and words[0] not in scope:
            self.set_variable(scope, words[0], words[2] if len(words) > 2 else "OFF")

    def do_list(self, command: Command, scope: dict[str, str], directory: _Directory, depth: int) -> None:
        words = self.values(command.arguments, scope)
        if len(words) < 2:
            return
        operation, name, rest = words[0].upper(), words[1], words[2:]
        items = [piece for piece in _split_list(scope.get(name, "")) if piece != ""]
        if operation == "APPEND":
            self.set_variable(scope, name, ";".join(items + rest))
        elif operation == "PREPEND":
            self.set_variable(scope, name, ";".join(rest + items))
        elif operation == "REMOVE_ITEM":
            self.set_variable(scope, name, ";".join(item for item in items if item not in rest))
        elif operation == "FIND" and len(rest) == 2:
            scope[rest[1]] = str(items.index(rest[0])) if rest[0] in items else "-1"
        elif operation == "LENGTH" and rest:
            scope[rest[0]] = str(len(items))

    def do_add_subdirectory(self, command: Command, scope: dict[str, str], directory: _Directory, depth: int) -> None:
        words = self.values(command.arguments, scope)
        if words:
            child = _absolute(words[0], scope["CMAKE_CURRENT_SOURCE_DIR"])
            self.read_directory(child, dict(scope), directory, depth + 1, scope.get("CMAKE_SOURCE_DIR", child))

    def do_externalproject_add(
        self, command: Command, scope: dict[str, str], directory: _Directory, depth: int
    ) -> None:
        words = self.values(command.arguments, scope)
        if "SOURCE_DIR" not in words or words.index("SOURCE_DIR") + 1 >= len(words):
            return
        source = _absolute(words[words.index("SOURCE_DIR") + 1], scope["CMAKE_CURRENT_SOURCE_DIR"])
        if os.path.realpath(source) in self.projects_read:
            return  # one sub-build per source: the run parses for one Hexagon version, given by the overrides
        self.projects_read.add(os.path.realpath(source))
        presets: dict[str, str] = {}
        if "CMAKE_ARGS" in words:
            for word in words[words.index("CMAKE_ARGS") + 1 :]:
                if word.isupper() and word.isidentifier():
                    break  # the next ExternalProject_Add keyword
                if word.startswith("-D") and "=" in word:
                    key, _, value = word[2:].partition("=")
                    presets[key.split(":", 1)[0]] = value.strip('"')
        presets.update(self.overrides)
        self.read_directory(source, presets, None, depth + 1, source)

    def do_add_compile_definitions(
        self, command: Command, scope: dict[str, str], directory: _Directory, depth: int
    ) -> None:
        directory.defines.extend(self.defines(command, self.values(command.arguments, scope), scope, None))

    def do_add_definitions(self, command: Command, scope: dict[str, str], directory: _Directory, depth: int) -> None:
        flags = [word for word in self.values(command.arguments, scope) if word.startswith(("-D", "/D"))]
        directory.defines.extend(self.defines(command, flags, scope, None))

    def do_target_sources(self, command: Command, scope: dict[str, str], directory: _Directory, depth: int) -> None:
        words = self.values(command.arguments, scope)
        target = self.targets.get(words[0]) if words else None
        if target is not None:
            target.sources.update(
                _absolute(word, scope["CMAKE_CURRENT_SOURCE_DIR"], real=True)
                for word in words[1:]
                if word not in _SCOPE_KEYWORDS
            )

    def do_target_compile_definitions(
        self, command: Command, scope: dict[str, str], directory: _Directory, depth: int
    ) -> None:
        words = self.values(command.arguments, scope)
        target = self.targets.get(words[0]) if words else None
        if target is None:
            return
        own: list[str] = []
        keyword = "PRIVATE"
        for word in words[1:]:
            if word in _SCOPE_KEYWORDS:
                keyword = word
            elif keyword != "INTERFACE":  # INTERFACE defines are for the target's users, not its own sources
                own.append(word)
        target.defines.extend(self.defines(command, own, scope, target.name))

    def defines(
        self, command: Command, items: Sequence[str], scope: dict[str, str], target: str | None
    ) -> list[Define]:
        result = []
        for item in items:
            value = evaluate_generator_expressions(item, scope)
            where = f"{command.path}:{command.line}"
            if value is None:
                self.notes.append(f"{where}: `{item}` needs what only the build knows; not taken")
                continue
            for piece in _split_list(value):
                piece = piece.strip()
                if piece.startswith(("-D", "/D")):
                    piece = piece[2:]
                if not piece:
                    continue
                name, equals, define_value = piece.partition("=")
                if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
                    self.notes.append(f"{where}: `{piece}` is not a define; not taken")
                    continue
                result.append(Define(name, define_value if equals else None, command.path, command.line, target))
        return result

    def new_target(self, command: Command, scope: dict[str, str], directory: _Directory) -> None:
        words = self.values(command.arguments, scope)
        if not words or "ALIAS" in words or "IMPORTED" in words:
            return
        target = _Target(words[0], directory.path)
        target.sources.update(
            _absolute(word, scope["CMAKE_CURRENT_SOURCE_DIR"], real=True)
            for word in words[1:]
            if word not in _TARGET_KEYWORDS
        )
        self.targets[target.name] = target
        directory.targets.append(target)

    def condition(self, command: Command, scope: dict[str, str]) -> bool:
        # if() takes its arguments expanded but not split into lists (an unquoted `${A}` stays one argument).
        tokens = [Argument(self.expand(argument.text, scope), argument.quoted) for argument in command.arguments]
        try:
            return _Condition(tokens, scope).evaluate()
        except (ValueError, IndexError, re.error):
            spelled = " ".join(argument.text for argument in command.arguments)
            self.notes.append(f"{command.path}:{command.line}: `if ({spelled})` is not understood; taken as false")
            return False


def _block_end(commands: list[Command], index: int, opener: str, closer: str) -> int:
    nesting = 0
    for position in range(index + 1, len(commands)):
        name = commands[position].name
        if name == opener:
            nesting += 1
        elif name == closer:
            if nesting == 0:
                return position
            nesting -= 1
    raise CMakeError(f"{commands[index].path}:{commands[index].line}: {opener}() without {closer}()")


def _split_list(value: str) -> list[str]:
    """A CMake list's items: split on `;` not escaped and not inside `[...]` (CMake's own rule)."""
    items, current, depth = [], [], 0
    index = 0
    while index < len(value):
        character = value[index]
        if character == "\\" and index + 1 < len(value) and value[index + 1] == ";":
            current.append(";")
            index += 2
            continue
        if character == "[":
            depth += 1
        elif character == "]" and depth:
            depth -= 1
        if character == ";" and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(character)
        index += 1
    items.append("".join(current))
    return items


def _absolute(path: str, base: str, real: bool = False) -> str:
    joined = os.path.normpath(path if os.path.isabs(path) else os.path.join(base, path))
    return os.path.realpath(joined) if real else joined


class _Condition:
    """CMake's if() language: parentheses, then unary tests, binary tests, NOT, AND, OR (in that precedence)."""

    _UNARY = frozenset({"EXISTS", "COMMAND", "DEFINED", "IS_DIRECTORY", "IS_ABSOLUTE", "TARGET", "POLICY", "TEST"})
    _BINARY = frozenset(
        {
            "EQUAL", "LESS", "GREATER", "LESS_EQUAL", "GREATER_EQUAL", "STREQUAL", "STRLESS", "STRGREATER",
            "STRLESS_EQUAL", "STRGREATER_EQUAL", "MATCHES", "VERSION_EQUAL", "VERSION_LESS", "VERSION_GREATER",
            "VERSION_LESS_EQUAL", "VERSION_GREATER_EQUAL", "IN_LIST",
        }
    )  # fmt: skip

    def __init__(self, tokens: list[Argument], scope: Mapping[str, str]) -> None:
        self.tokens = tokens
        self.scope = scope

    def evaluate(self) -> bool:
        value, rest = self._or(self.tokens)
        if rest:
            raise ValueError("trailing arguments")
        return value

    def _or(self, tokens: list[Argument]) -> tuple[bool, list[Argument]]:
        value, tokens = self._and(tokens)
        while tokens and not tokens[0].quoted and tokens[0].text == "OR":
            other, tokens = self._and(tokens[1:])
            value = value or other
        return value, tokens

    def _and(self, tokens: list[Argument]) -> tuple[bool, list[Argument]]:
        value, tokens = self._not(tokens)
        while tokens and not tokens[0].quoted and tokens[0].text == "AND":
            other, tokens = self._not(tokens[1:])
            value = value and other
        return value, tokens

    def _not(self, tokens: list[Argument]) -> tuple[bool, list[Argument]]:
        if tokens and not tokens[0].quoted and tokens[0].text == "NOT":
            value, tokens = self._not(tokens[1:])
            return not value, tokens
        return self._test(tokens)

    def _test(self, tokens: list[Argument]) -> tuple[bool, list[Argument]]:
        if not tokens:
            raise ValueError("missing operand")
        first = tokens[0]
        if not first.quoted and first.text == "(":
            value, rest = self._or(tokens[1:])
            if not rest or rest[0].text != ")":
                raise ValueError("unbalanced parenthesis")
            return value, rest[1:]
        if not first.quoted and first.text in self._UNARY:
            return self._unary(first.text, tokens[1]), tokens[2:]
        if len(tokens) >= 3 and not tokens[1].quoted and tokens[1].text in self._BINARY:
            return self._binary(tokens[1].text, first, tokens[2]), tokens[3:]
        return self._truth(first), tokens[1:]

    def _value(self, argument: Argument) -> str:
        """An operand: an unquoted variable name reads the variable, anything else is itself."""
        if not argument.quoted and argument.text in self.scope:
            return self.scope[argument.text]
        return argument.text

    def _truth(self, argument: Argument) -> bool:
        text = argument.text
        if text.upper() in _TRUE_CONSTANTS or text.upper() in _FALSE_CONSTANTS or text.upper().endswith("-NOTFOUND"):
            return _is_true(text)
        try:
            return float(text) != 0
        except ValueError:
            pass
        if argument.quoted:
            return False  # a quoted string that is no true constant is false (policy CMP0054)
        return text in self.scope and _is_true(self.scope[text])

    def _unary(self, operator: str, operand: Argument) -> bool:
        text = operand.text
        if operator == "DEFINED":
            return text in self.scope
        if operator == "EXISTS":
            return os.path.exists(text)
        if operator == "IS_DIRECTORY":
            return os.path.isdir(text)
        if operator == "IS_ABSOLUTE":
            return os.path.isabs(text)
        if operator == "POLICY":
            return True
        raise ValueError(f"{operator} is not known here")  # COMMAND, TARGET, TEST

    def _binary(self, operator: str, left_argument: Argument, right_argument: Argument) -> bool:
        left, right = self._value(left_argument), self._value(right_argument)
        if operator == "MATCHES":
            return re.search(right, left) is not None
        if operator == "IN_LIST":
            return left in _split_list(self.scope.get(right_argument.text, ""))
        if operator.startswith("VERSION_"):
            return _compare(_version(left), _version(right), operator[len("VERSION_") :])
        if operator.startswith("STR"):
            return _compare(left, right, operator[3:] or "EQUAL")
        if operator == "STREQUAL":
            return left == right
        return _compare(float(left), float(right), operator)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:4])


def _compare(left: object, right: object, operator: str) -> bool:
    return {
        "EQUAL": left == right,
        "LESS": left < right,  # type: ignore[operator]
        "GREATER": left > right,  # type: ignore[operator]
        "LESS_EQUAL": left <= right,  # type: ignore[operator]
        "GREATER_EQUAL": left >= right,  # type: ignore[operator]
    }[operator]


# ---------------------------------------------------------------- generator expressions


def evaluate_generator_expressions(text: str, scope: Mapping[str, str]) -> str | None:
    """`text` with every `$<...>` replaced by its value, or None when one needs what only the build knows."""
    result: list[str] = []
    position = 0
    while True:
        start = text.find("$<", position)
        if start < 0:
            result.append(text[position:])
            return "".join(result)
        result.append(text[position:start])
        end = _skip_balanced(text, start + 1)
        value = _generator_expression(text[start + 2 : end - 1], scope)
        if value is None:
            return None
        result.append(value)
        position = end


def _split_top_level(text: str, separator: str) -> list[str]:
    pieces, depth, start = [], 0, 0
    for index, character in enumerate(text):
        if text.startswith("$<", index):
            depth += 1
        elif character == ">" and depth:
            depth -= 1
        elif character == separator and depth == 0:
            pieces.append(text[start:index])
            start = index + 1
    pieces.append(text[start:])
    return pieces


def _generator_expression(body: str, scope: Mapping[str, str]) -> str | None:
    constants = {"COMMA": ",", "SEMICOLON": ";", "ANGLE-R": ">", "QUOTE": '"'}
    if body in constants:
        return constants[body]
    pieces = _split_top_level(body, ":")
    head, colon, rest = pieces[0], len(pieces) > 1, ":".join(pieces[1:])
    head_value = evaluate_generator_expressions(head, scope)
    if head_value is None:
        return None
    if not colon:
        return None
    if head_value in ("0", "1"):  # $<condition:value>
        return "" if head_value == "0" else evaluate_generator_expressions(rest, scope)
    arguments = [evaluate_generator_expressions(piece, scope) for piece in _split_top_level(rest, ",")]
    if any(argument is None for argument in arguments):
        return None
    values = [argument for argument in arguments if argument is not None]
    if head_value == "BOOL":
        return "1" if _is_true(rest if not values else values[0]) else "0"
    if head_value == "NOT" and len(values) == 1 and values[0] in ("0", "1"):
        return "0" if values[0] == "1" else "1"
    if head_value in ("AND", "OR") and all(value in ("0", "1") for value in values):
        truths = [value == "1" for value in values]
        return "1" if (all(truths) if head_value == "AND" else any(truths)) else "0"
    if head_value == "IF" and len(values) == 3 and values[0] in ("0", "1"):
        return values[1] if values[0] == "1" else values[2]
    if head_value == "STREQUAL" and len(values) == 2:
        return "1" if values[0] == values[1] else "0"
    if head_value == "EQUAL" and len(values) == 2:
        try:
            return "1" if float(values[0]) == float(values[1]) else "0"
        except ValueError:
            return None
    if head_value == "CONFIG":
        build_type = scope.get("CMAKE_BUILD_TYPE", "")
        return "1" if any(value.upper() == build_type.upper() for value in values) else "0"
    return None


# ---------------------------------------------------------------- entry point


def read_build_defines(root: str, overrides: Mapping[str, str] | None = None) -> BuildDefines:
    """Read the CMakeLists.txt at `root` and what it adds (subdirectories, external projects).

    `overrides` are variables fixed from outside (`DSP_VERSION` = the arch parsed for): no set() changes them.
    Never raises for a bad build file: what cannot be read is left out, with a note.
    """
    reader = _Reader(overrides or {})
    scope = dict(reader.overrides)
    try:
        reader.read_directory(root, scope, None, 0, root)
    except (CMakeError, RecursionError) as error:
        reader.notes.append(f"{error}; defines after it are not taken")
    directories = tuple(
        (
            directory.path,
            tuple(directory.defines),
            tuple((frozenset(target.sources), tuple(target.defines)) for target in directory.targets),
        )
        for directory in reader.directories
    )
    return BuildDefines(directories, tuple(reader.files_read), tuple(dict.fromkeys(reader.notes)))


def describe(defines: Sequence[Define], root: str | None = None) -> Iterator[str]:
    """`NAME=VALUE  (CMakeLists.txt:LINE, target T)` lines for -v and --show-settings."""
    for define in defines:
        where = os.path.relpath(define.path, root) if root else define.path
        target = f", target {define.target}" if define.target else ""
        yield f"{define.flag}  ({where}:{define.line}{target})"


class TreeBuilds:
    """The build defines of a run's files, each tree's build files read once (per run: files may change between)."""

    def __init__(self, arch: str, overridden: Sequence[str] = (), enabled: bool = True) -> None:
        self.arch = arch
        # A define the configuration or -D names (NAME, NAME=VALUE, NAME(ARGS)=VALUE) replaces the build's.
        self.overridden = frozenset(re.split(r"[=(]", define, maxsplit=1)[0] for define in overridden)
        self.enabled = enabled
        self.builds: dict[str, BuildDefines] = {}

    def build(self, root: str) -> BuildDefines:
        if root not in self.builds:
            self.builds[root] = read_build_defines(root, {"DSP_VERSION": self.arch})
        return self.builds[root]

    def defines_for(self, path: str, root: str | None) -> tuple[Define, ...]:
        if not self.enabled or root is None or not os.path.isfile(os.path.join(root, CMAKE_LISTS)):
            return ()
        return tuple(define for define in self.build(root).defines_for(path) if define.name not in self.overridden)
