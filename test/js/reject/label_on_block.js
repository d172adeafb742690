// expect: 5:3 label
// anchor: done
// A labelled block is out too.
{
  done: {
    console.log("in block");
    break done;
  }
}
