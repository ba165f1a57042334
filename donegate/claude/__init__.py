"""The one boundary to Claude Code.

- `settings`: the settings vocabulary, what the kit writes into a settings file (hooks in exec form,
  deny rules, the sandbox) and the guard settings of its own headless runs;
- `shapes`: what Claude Code accepts when it reads a settings file, and how it reads hook commands
  and deny rules (doctor and install check files with it);
- `stubs`: the hook stubs at a neutral path, the command line Claude Code shows the model (and the other
  clients run) names nothing of the kit;
- `managed`: the shape and place of the machine-wide managed drop-in;
- `binary`: which `claude` the kit runs, and the version the kit pins;
- `headless`: the one place the kit runs `claude -p` (the writer and the reviewers), every call
  logged with its cost in `logs/model.jsonl`; the model boundary the tests fake.

These modules import nothing of the kit's commands (install, doctor, writer, reviewer): those import
them, never the other way round.
"""
