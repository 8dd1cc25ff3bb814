"""Testing Conviction: true vs performative stances under argument pressure and personas."""
