import numpy

from gridlib.grid_util import grid_slim_from

mask = numpy.zeros((3, 3), dtype=bool)
mask[0, 0] = True
print(grid_slim_from(mask, pixel_scales=(0.1, 0.1)))
