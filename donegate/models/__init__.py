"""The kit's own model jobs, each a separate headless `claude -p` (`donegate.claude.headless`): the writer
(`writer`: acceptance tests from the request, before the change) and the reviewers (`reviewer`: two reviewers, or
reviewer + critic, with JSON verdicts). Their prompts and schemas are files: `writer/`, `reviewer/`."""
