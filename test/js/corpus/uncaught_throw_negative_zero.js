// A thrown number is printed as String() shows it: -0 prints as 0.
console.log("throwing", -0);
throw -0;
