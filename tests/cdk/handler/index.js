// The deployed function: answers with the table and queue it was given.
exports.handler = async () => ({ table: process.env.TABLE, queue: process.env.QUEUE });
