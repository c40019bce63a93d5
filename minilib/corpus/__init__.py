"""A team's whole history: one policy at each threshold over every session under a
folder, on one process or on a Dask cluster (`python -m minilib sweep FOLDER ...`).

`sessions` is the task (one session in, its rows of numbers out); `engine` runs it
over a folder and writes the rows as they arrive; `table` reads and writes them."""
