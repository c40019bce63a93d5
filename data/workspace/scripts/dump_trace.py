# prints every trace record of a run
