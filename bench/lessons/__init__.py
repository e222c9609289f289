"""Lesson benchmark: 14 lesson classes, each met in 3 small repos; distil two, find the lesson for the third."""
