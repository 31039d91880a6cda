"""Drive `helper chat` through a pipe like a person at a keyboard: send a request at the user's
prompt, answer each feedback question from the script (then the turn's default), and keep the whole
transcript. Usage: drive.py SCRIPT.json TRANSCRIPT.txt -- helper chat ARGS..."""
import json, sys, time
from pexpect.popen_spawn import PopenSpawn
import pexpect

script_path, out_path = sys.argv[1], sys.argv[2]
cmd = sys.argv[sys.argv.index("--") + 1:]
script = json.load(open(script_path))
user = cmd[cmd.index("--user") + 1]
log = open(out_path, "w")
child = PopenSpawn(cmd, encoding="utf-8", timeout=1800)
child.logfile_read = log
PROMPT = f"{user}> "
QUESTION = "Did I miss anything?"
child.expect_exact(PROMPT)
for turn in script:
    start = time.time()
    child.sendline(turn["say"])
    answers = list(turn.get("answers", []))
    while True:
        i = child.expect_exact([PROMPT, QUESTION, pexpect.EOF])
        if i == 1:
            if answers:
                answer = answers.pop(0)
            elif "yes_if" in turn:  # the person looks at what was done before saying yes
                import re
                answer = "yes" if re.search(turn["yes_if"], child.before) else turn.get("otherwise", "no")
            else:
                answer = turn.get("default", "yes")
            child.sendline(answer)
            continue
        break
    log.write(f"\n[driver: turn took {time.time() - start:.0f} s]\n")
    log.flush()
    if i == 2:
        break
child.sendline("/quit")
child.expect(pexpect.EOF)
log.close()
