import { holdCommand } from "./holds.ts";

export default holdCommand("hold");
