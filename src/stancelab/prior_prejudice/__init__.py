"""Prior prejudice: persuasiveness ratings leak model beliefs; persuasion as a probe."""
