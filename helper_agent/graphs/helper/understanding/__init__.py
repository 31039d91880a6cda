"""The HELPER graph's understanding of a person's words: which object classes and steps a request
or a change names, and what a change asks of the routine it changes.

These are English heuristics, each written down with the failure that motivated it; they read words
and hand the program layer (`program/edits/`, which knows the edit language and the syntax tree but
no English) what they found. One job a module:

- `words`: single words and short phrases -> classes, steps, numbers (`named_classes`, `named_steps`);
- `in_household`: the classes a program makes read as the household's (`in_household`: the "Lamp" of
  "turn on the lamp" is the FloorLamp of a living room that has one; the rule is `program/kinds.py`'s);
- `phrases`: constructions over a change's words (`contrast_parts`, `placements`, `new_holder`, ...);
- `grounding`: a change read against the program it edits (`Grounding`, the grammar's `EditScope`);
- `part_check`: what a new part the planner wrote lacks of what its words ask for (`part_lacks`).
- `scope`: what a request may change, the objects it names and the tools its steps need
  (`request_scope`; the step-tool table is `program/steps.py`'s, shared with `helper eval requests`);
- `asked`: what a request's words ask a program to end with, its placements and its toasting,
  cooking and washing (`asked`), which the scope check adds to a first plan that left them out.
"""
