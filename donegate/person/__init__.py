"""What only a person may do, and what a person reads: the kit's commands refused to the agent
(`ownership`) and what `status` gathers (`overview`). The agent's appeal to a person is a stage of the
Stop hook (`donegate.gate.appeal`): nothing of a stop imports this package."""
