"""DPO on a toy log-linear policy, in numpy."""
