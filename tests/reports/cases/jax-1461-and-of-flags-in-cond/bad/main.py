from selector import pick

print(pick(True, True, 1, 2))
print(pick(True, False, 1, 2))
