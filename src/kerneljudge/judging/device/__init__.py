"""One device as the judge uses it: whose turn it is there (turns), what its memory holds (memory, the card's own
account), the slot that ties them to its reference processes, environment and cores (slots), and those trusted
reference processes, one per problem (reference_pool).

May import: core, judging (its other modules), sandbox. Never worker (workers are started by module name).
"""
