"""Edits to a program: the small, checked changes that adapt a recalled routine to a request.

HELPER's personalization asks a model to turn "the Mary cleaning, but bowls instead of cups and
only one plate" into a new program. Regenerating the whole program from the routine, the request and
examples was beyond the 0.5B model (a routine recalled unchanged came back wrong one time in five;
two or three changes practically never came out right). Here the model's part is one short line per
change, written under a grammar that only admits the routine's own object classes where an object of
the routine is meant; the edit is then applied to the program's syntax tree, deterministically, and
the result is compiled like any plan. An edit that would make an invalid program raises `EditError`
with a reason the model can act on.

One job a module:

- `language`: the edit language (`Edit`, `parse_edit`, `EditError`) and an edit in a person's words;
- `grammar`: the GBNF of one edit over a program (`edit_grammar`), narrowed by an `EditScope`;
- `tree`: what a program's syntax tree holds (its objects, their steps and roles) and writing it back;
- `apply`: an edit applied to the tree (`apply_edit`);
- `append`: a new part the planner wrote, joined to the routine (`append_program`);
- `trim`: a program without the steps that change objects of given classes (`trim_classes`), for
  the graph's scope check: a plan that does what was asked and more keeps the asked part.
- `part`: what a correction says is missing (`Missing` steps), written as a program (`part_program`).
- `loops`: a loop that makes a new object each round cut to the household's count (`fit_loops`).

Reading a person's words (which classes a change names, what it puts in place of what) is not
here: it is the understanding of requests (`helper_agent/understanding/`, above this layer), which
hands the grammar its reading as an `EditScope`. This package knows the edit language and the tree,
never English.
"""
