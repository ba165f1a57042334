"""The one boundary to Claude Code.

- `settings`: the settings vocabulary, what the kit writes into a settings file (hooks in exec form,
  deny rules, the sandbox) and the guard settings of its own headless runs;
- `shapes`: what Claude Code accepts when it reads a settings file, and how it reads hook commands
  and deny rules (doctor and install check files with it);
- `managed`: the shape and place of the machine-wide managed drop-in;
- `binary`: which `claude` the kit runs, and the version the kit pins.

These modules import nothing of the kit's commands (install, doctor, the model runs): those import
them, never the other way round. `donegate.model` (headless `claude -p` runs) moves here as
`headless` once the confinement work on its callers has landed.
"""
