"""The HELPER graph's understanding of a person's words: which object classes and steps a request
or a change names, and what a change asks of the routine it changes.

These are English heuristics, each written down with the failure that motivated it; they read words
and hand the program layer (`program/edits/`, which knows the edit language and the syntax tree but
no English) what they found. One job a module:

- `words`: single words and short phrases -> classes, steps, numbers (`named_classes`, `named_steps`);
- `phrases`: constructions over a change's words (`contrast_parts`, `placements`, `new_holder`, ...);
- `grounding`: a change read against the program it edits (`Grounding`, the grammar's `EditScope`);
- `part_check`: what a new part the planner wrote lacks of what its words ask for (`part_lacks`).
"""
