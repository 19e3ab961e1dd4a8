"""kerneljudge as a service: the HTTP server with its job queue and journal, its client, and the reward
function that training loops call (in-process or through a server).

May import: core, judging, sandbox, suite, generate, api.
"""
