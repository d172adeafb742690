// Nested arrays and indexing.
const grid = [[1, 2, 3], [4, 5, 6], [7, 8, 9]];
console.log(grid[1][2]);
console.log(grid[2]);
console.log(grid.map((row) => row[0]));
grid[0][0] = 100;
console.log(grid);
console.log(grid[5]);
console.log(grid[0][10]);
