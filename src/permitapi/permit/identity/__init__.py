"""Which permit a (number, jurisdiction?) pair names, and the paths that name it."""
