event(a(1), 1).
end_of_file.
event(b(1), 3).
event(a(2), 4).
event(b(2), 5).
