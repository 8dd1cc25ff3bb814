"""Launching a run's shards on an engine a cluster already has: a Slurm job array through
submitit (`slurm`), a Kubernetes Indexed Job (`k8s`), each task's shard read from its
environment (`task`), then one analysis of the whole log location; `command` is the command
line of `stancelab launch`."""
