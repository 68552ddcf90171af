"""The combination matrix (issue 28): every setting, dialect, device profile and interface,
in one covering design (``tests.matrix.design``), run through the public interfaces with
each cell's outcome read from the phone's state."""
