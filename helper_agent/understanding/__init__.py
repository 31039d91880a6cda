"""The understanding of a person's words: which object classes and steps a request or a change
names, what a change asks of the routine it changes, what a correction says is missing, and whether
a request names anything the household has.

These are English heuristics, each written down with the failure that motivated it; they read words
and hand the program layer (`program/edits/`, which knows the edit language and the syntax tree but
no English) what they found. The package sits below the graphs (issue 63): it imports no graph's
state or context, no LangGraph and no LangChain, so any method, the chat and the app read requests
with it. The HELPER graph uses it today; what works on a graph's state or its model's messages stays in
`graphs/helper/` (`scoping.py`, `teaching.py`, `feedback.py`, `adaptation.py`). One job a module:

- `words`: single words and short phrases -> classes, steps, numbers (`named_classes`, `named_steps`);
- `kinds`: a class and its kinds, the class->kind rule read from the catalog's names (the "Lamp" a
  program names is the household's FloorLamp: `household_class`, `kinds_of`);
- `in_household`: the classes a program makes read as the household's (`in_household`: the "Lamp" of
  "turn on the lamp" is the FloorLamp of a living room that has one; the rule is `kinds`'s);
- `absent`: the word->class reading of what a request names, and the refusal of a request about
  nothing the household has (`Vocabulary`, `refusal_for`: "mow the lawn" in a flat);
- `class_mapping`: a class the API does not know mapped to the closest catalog class by meaning
  (`EmbeddingClassMapper`, over `memory/embeddings.py`);
- `requests`: teaching a routine and recalling one unchanged (`teach_request`, `is_unchanged_recall`);
- `clauses`: where a request's changes begin and end, clause breaks read from the sentence;
- `phrases`: constructions over a change's words (`contrast_parts`, `placements`, `new_holder`, ...);
- `grounding`: a change read against the program it edits (`Grounding`, the grammar's `EditScope`);
- `part_check`: what a new part the planner wrote lacks of what its words ask for (`part_lacks`);
- `scope`: what a request may change, the objects it names and the tools its steps need
  (`request_scope`; the step-tool table is `program/steps.py`'s, shared with `helper eval requests`);
- `asked`: what a request's words ask a program to end with, its placements and its toasting,
  cooking and washing (`asked`), which the scope check adds to a first plan that left them out;
- `missing`: what the person says is missing after a run, read as the steps that add it (`read_missing`;
  `program/edits/part.py` writes them).
"""
