"""What only a person may do, and what a person reads: the kit's commands refused to the agent
(`ownership`), the agent's appeal to a person (`appeal`), and what `status` gathers (`overview`)."""
