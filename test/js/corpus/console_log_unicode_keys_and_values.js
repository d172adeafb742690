// Non-ASCII keys are quoted; values keep their characters.
console.log({ "ключ": "значение", key: "日本語", "😀": "😀" });
