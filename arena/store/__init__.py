"""The results store: the database and its replay files, the writer process, the rebuild from replays.
May import the game package (for replay records) and the shared basics; not the tournament or anything above."""
