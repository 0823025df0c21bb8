/** Jest setupFilesAfterEnv: tells the socket-origin recorder which test file is running (see open-sockets.ts). */
import { noteTestFile } from './open-sockets';

beforeAll(() => noteTestFile(expect.getState().testPath));
afterAll(() => noteTestFile(undefined));
